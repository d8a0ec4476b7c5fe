#!/usr/bin/env bash
# Failover smoke for CI (called from .ci/run): a short load run while the harness's own Postgres
# primary is killed and its synchronous standby promoted (`--chaos failover`, issue 33). Fails on
# any checker violation (a lost task, a status seen going backwards, an HTTP 500, a 5xx without
# Retry-After) or if no failover happened. The full drill is `pnpm loadtest --chaos all`.
# Needs DATABASE_URL / REDIS_URL (set by .ci/run) and Debian's postgresql-15 server binaries
# (initdb, pg_ctl, pg_basebackup), run as the postgres user: CI runs as root.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ ! -x /usr/lib/postgresql/15/bin/pg_basebackup ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null
fi

out="$(mktemp -d)"
pnpm loadtest --tasks 120 --concurrency 12 --chaos failover --chaos-phase 10 --seed ci-failover \
  --report "$out/failover"
promoted=$(grep -c '"action":"promoted"' "$out/failover/history.jsonl" || true)
if [ "$promoted" -lt 1 ]; then
  echo "failover smoke: no failover happened during the run" >&2
  exit 1
fi
echo "failover smoke: $promoted failover(s), checker passed"
