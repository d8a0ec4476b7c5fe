#!/usr/bin/env bash
# Checks the example tool pack's deployment recipe without a Docker engine: the Dockerfile's build
# stage (pnpm deploy of the pack) yields a directory node can import on its own, and the compose
# override and kustomize overlay render against the root files when those exist. Needs `pnpm build`.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

pnpm --filter @mcp-tasks/example-link-audit deploy --prod --legacy "$out/link-audit" >/dev/null
(cd "$out" && node --input-type=module -e "
  const { tools } = await import('$out/link-audit/dist/index.js');
  const names = tools.map((tool) => tool.name).join(',');
  if (names !== 'audit_links') throw new Error('unexpected tools: ' + names);
  console.log('deployed pack exports', names);
")

# The ledger example deploys the same way (no recipe of its own beyond the pack itself).
pnpm --filter @mcp-tasks/example-ledger deploy --prod --legacy "$out/ledger" >/dev/null
(cd "$out" && node --input-type=module -e "
  const { tools } = await import('$out/ledger/dist/index.js');
  const names = tools.map((tool) => tool.name).join(',');
  if (names !== 'transfer_funds') throw new Error('unexpected tools: ' + names);
  console.log('deployed pack exports', names);
")

if [ -f docker-compose.yml ] && command -v docker-compose >/dev/null; then
  # Captured first: `config | grep -q` failed CI with exit 141 once grep, done at the first match,
  # closed the pipe while docker-compose was still writing (SIGPIPE under pipefail).
  composed=$(docker-compose -f docker-compose.yml -f examples/link-audit/deploy/compose.link-audit.yaml config)
  grep -q '/opt/mcp-tools/link-audit/dist/index.js' <<<"$composed"
  echo 'compose override renders'
fi
if [ -d k8s/base ] && command -v kubectl >/dev/null; then
  rendered=$(kubectl kustomize examples/link-audit/deploy/k8s)
  [ "$(grep -c 'value: /opt/mcp-tools/link-audit/dist/index.js' <<<"$rendered")" = 2 ]
  echo 'kustomize overlay renders'
fi
