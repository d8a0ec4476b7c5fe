#!/usr/bin/env bash
# `pnpm conformance`: starts the built stack (one gateway, one worker) on a fresh database and a
# private Redis prefix, runs the official MCP conformance suite against it (on the workspace's Node 24: `pnpm conformance`
# puts node_modules/.bin, with the root devDependency `node`, first on PATH), stops the stack.
# Scenarios that cannot pass are listed with their reasons in conformance/expected-failures.yml.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/install-tools.sh >/dev/null
suite="$root/.tools/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"

base_url="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
db_name="mcpt_conformance_$(date +%s)_$$"
psql -q "$base_url" -c "CREATE DATABASE $db_name" >/dev/null
export DATABASE_URL="${base_url%/*}/$db_name"
export REDIS_PREFIX="mcpt-conformance-$$"
port="${CONFORMANCE_PORT:-18080}"
logs="$root/results/conformance"
mkdir -p "$logs"

[ -f apps/gateway/dist/main.js ] && [ -f apps/worker/dist/main.js ] || pnpm build >/dev/null

# The node binary itself: under `pnpm conformance`, `node` on PATH is pnpm's shell shim, which
# does not exec, so a SIGTERM to its pid would leave the gateway and worker running.
node_bin="$(node -p 'process.execPath')"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  psql -q "$base_url" -c "DROP DATABASE IF EXISTS $db_name WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT

pnpm --silent db:migrate >/dev/null
MCP_AUTH=none PORT="$port" HOST=127.0.0.1 LOG_LEVEL=warn \
  "$node_bin" apps/gateway/dist/main.js >"$logs/gateway.log" 2>&1 &
pids+=($!)
METRICS_PORT=0 LOG_LEVEL=warn SWEEP_INTERVAL_MS=1000 REPORT_STEP_MS=100 \
  "$node_bin" apps/worker/dist/main.js >"$logs/worker.log" 2>&1 &
pids+=($!)
# Ready, not only up: on a busy machine the first /readyz can come before the store answers.
for _ in $(seq 150); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null

scenarios=(
  server-stateless tools-list http-header-validation caching dns-rebinding-protection
  tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
  tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications
  tasks-required-task-error tasks-mrtr-composition
)
# Scenarios introduced before 2026-07-28 default to the stateful 2025-11-25 wire (initialize);
# pin them to the stateless wire. Extension (tasks-*) scenarios must NOT get --spec-version: the
# runner would skip them and exit 0.
spec_args() {
  case "$1" in
    tools-list | dns-rebinding-protection) echo "--spec-version 2026-07-28" ;;
  esac
}
failed=()
skipped=()
for scenario in "${scenarios[@]}"; do
  log="$logs/$scenario.log"
  # shellcheck disable=SC2046
  if ! node "$suite" server --url "http://127.0.0.1:$port/mcp" --scenario "$scenario" \
    $(spec_args "$scenario") --expected-failures conformance/expected-failures.yml >"$log" 2>&1; then
    printf 'conformance %-32s FAILED (see results/conformance/%s.log)\n' "$scenario" "$scenario"
    tail -n 30 "$log"
    failed+=("$scenario")
  elif grep -q 'Passed: 0/0' "$log" || grep -q 'SKIPPED.*not applicable' "$log"; then
    # The suite ran no check (e.g. tasks-status-notifications is a placeholder upstream):
    # report it as skipped, never as passed.
    printf 'conformance %-32s skipped by the suite (0 checks)\n' "$scenario"
    skipped+=("$scenario")
  else
    printf 'conformance %-32s passed (%s)\n' "$scenario" "$(grep -oE 'Passed: [0-9]+/[0-9]+' "$log" | head -n1)"
  fi
done
echo "conformance: $((${#scenarios[@]} - ${#failed[@]} - ${#skipped[@]})) passed, ${#failed[@]} failed, ${#skipped[@]} skipped"
[ "${#failed[@]}" -eq 0 ]
