#!/usr/bin/env bash
# The measurement behind docs/adr/0002: pgbench on the real tasks table with each notify option.
# PGURL must name a migrated scratch database on a Postgres you may load (never the shared one's
# settings: for the logical-decoding rows start a private server with -c wal_level=logical).
#   PGURL=postgres://postgres@127.0.0.1:55432/bench ./run.sh [rounds] [seconds]
set -euo pipefail
cd "$(dirname "$0")"
: "${PGURL:?set PGURL to a migrated scratch database}"
ROUNDS=${1:-3}
SECONDS_PER_RUN=${2:-10}
P=(psql -q -X -v ON_ERROR_STOP=1 "$PGURL")
"${P[@]}" -f seed.sql >/dev/null
"${P[@]}" -c "ALTER TABLE tasks ADD COLUMN IF NOT EXISTS listened boolean NOT NULL DEFAULT false" >/dev/null
run() { # trigger workload listened
  "${P[@]}" -f "$1-trigger.sql" >/dev/null 2>&1
  "${P[@]}" -c "UPDATE tasks SET listened = $3 WHERE id LIKE 'r%'" -c "VACUUM tasks" >/dev/null
  tps=$(pgbench -n -c 8 -j 2 -T "$SECONDS_PER_RUN" -f "$2.sql" "$PGURL" 2>&1 | grep -o 'tps = [0-9.]*')
  echo "$(date +%T) load=$(cut -d' ' -f1 /proc/loadavg) $1 $2 listened=$3: $tps"
}
for _ in $(seq "$ROUNDS"); do
  for workload in update insert; do
    run none "$workload" false
    run old "$workload" false
    run new "$workload" false
    run new "$workload" true
    run stmt "$workload" false
  done
done
