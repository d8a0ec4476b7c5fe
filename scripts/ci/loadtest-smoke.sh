#!/usr/bin/env bash
# Load-test smoke for CI (called from .ci/run): a short chaos run (300 tasks while gateways and
# workers are SIGKILLed, through a real nginx; fails on any checker violation). The checker's
# tests run with `pnpm test`; the bench's smoke is scripts/ci/bench-smoke.sh.
# Needs DATABASE_URL / REDIS_URL (set by .ci/run).
set -euo pipefail
cd "$(dirname "$0")/../.."

out="$(mktemp -d)"
pnpm loadtest --tasks 300 --concurrency 20 --chaos kill-worker,kill-gateway --chaos-phase 10 \
  --seed ci --report "$out/chaos"
