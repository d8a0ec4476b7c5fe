#!/usr/bin/env bash
# The measurement behind packages/store/src/db/prepared-statements.ts: the create's INSERT, the
# claim and the tasks/get read as pgbench runs them unnamed (-M simple: parsed and planned every
# time) and prepared (-M prepared: parsed once, a cached plan), one client.
# PGURL must name a migrated scratch database (the ids are random, so the claim and the read find
# no row: what is measured is the parse, plan and index probe).
#   PGURL=postgres://postgres@127.0.0.1:5432/scratch ./run.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")"
: "${PGURL:?set PGURL to a migrated scratch database}"
seconds="${1:-5}"
for statement in insert claim task-view; do
  for mode in simple prepared; do
    latency=$(pgbench -n -c1 -T"$seconds" -M "$mode" -f "$statement.sql" "$PGURL" 2>&1 |
      sed -n 's/^latency average = //p')
    echo "$statement $mode: $latency"
  done
done
