#!/usr/bin/env bash
# CPU per task of this checkout's gateway + worker (tracing off: no OTEL_* set) against another
# commit's, at a fixed arrival rate, in alternating pairs on fresh stacks (issue 28: "tracing off
# costs ≤ 3 % over the code before tracing"). Prints each pair's ratio (this ÷ baseline) and the
# median with its spread.
#
#   scripts/bench/tracing-off-ab.sh [BASELINE] [cpu-ab options: --pairs 5 --rate 200 --duration 20
#     --warmup 5, --together to run both sides of a pair at the same time]
#
# BASELINE defaults to f77eb6e, main just before the `traces` merge (bceb843). CANDIDATE=<commit>
# measures that commit instead of this checkout (CANDIDATE=bceb843: the tracing change alone).
# Each commit other than this checkout is exported (git archive) to $TMPDIR/mcp-tasks-ab-<sha>,
# installed and built once, and reused by later runs. The harness (the load, the CPU samples)
# is this checkout's; only the measured apps and their migrations come from the other tree.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

baseline="f77eb6e"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  baseline="$1"
  shift
fi

# Exports and builds COMMIT (once) and prints its directory.
prepare() {
  local sha dir
  sha="$(git rev-parse --verify "$1^{commit}")"
  dir="${TMPDIR:-/tmp}/mcp-tasks-ab-${sha:0:12}"
  if [ "$(cat "$dir/.ab-built" 2>/dev/null)" != "$sha" ]; then
    echo "[ab] building ${sha:0:12} in $dir" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    git archive "$sha" | tar -x -C "$dir"
    (cd "$dir" && pnpm install --frozen-lockfile --prefer-offline >&2 && pnpm build >&2)
    echo "$sha" >"$dir/.ab-built"
  fi
  echo "$dir"
}

baseline_dir="$(prepare "$baseline")"
args=(--baseline-root "$baseline_dir" --baseline-name "$(git rev-parse --short "$baseline^{commit}")")
if [ -n "${CANDIDATE:-}" ]; then
  args+=(--candidate-root "$(prepare "$CANDIDATE")" --candidate-name "$(git rev-parse --short "$CANDIDATE^{commit}")")
fi
exec pnpm exec tsx --conditions=@mcp-tasks/source tooling/loadtest/src/bench/cpu-ab.ts "${args[@]}" "$@"
