#!/usr/bin/env bash
# Bench smoke for CI (called from .ci/run): `pnpm bench --quick`, 1 s per measurement after 0.5 s of
# warm-up, failing if any figure is missing: it checks that every figure is there, not what it is.
# Needs DATABASE_URL / REDIS_URL (set by .ci/run) and pgbench (Debian's postgresql-15 package).
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v pgbench >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null  # pgbench ships with the server package
fi

out="$(mktemp -d)"
pnpm bench --quick --duration 1 --warmup 0.5 --json "$out/bench.json"
node -e '
  const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  const figures = {
    "(a) pgbench 1 client tps": r.pgbench.one.tps,
    "(a) pgbench 8 clients tps": r.pgbench.eight.tps,
    "(b) BullMQ jobs/s": r.bullmq.jobsPerS,
    "(b) BullMQ jobs/s right before the 1+1 line": r.bullmqBesideEndToEnd?.before.jobsPerS,
    "(b) BullMQ jobs/s right after the 1+1 line": r.bullmqBesideEndToEnd?.after.jobsPerS,
    ...Object.fromEntries(
      [["hono json", r.hono.json], ["hono + pg", r.hono.pg], ["tasks/get", r.tasksGet]].flatMap(
        ([label, runs]) => (runs ?? []).map((x) => [`(c) ${label} ${x.connections} conn req/s`, x.requestsPerS]))),
    "(d) create p50 ms": r.createAtFixedRate.latency.p50,
    "(e) realistic mix tasks/s": r.realisticMix?.realistic.tasksPerS,
    "(e) realistic mix, no-input tasks/s": r.realisticMix?.plain.tasksPerS,
    "(d) realistic create p99 ms": r.realisticMix?.createAtFixedRate.latency.p99,
    "(e) tracing off CPU ms/task at the fixed rate": r.endToEndTraces?.off[0]?.cpuMsPerTask,
    "(e) tracing on CPU ms/task at the fixed rate": r.endToEndTraces?.on[0]?.cpuMsPerTask,
    "(f) remote_apply lifecycles/s": r.syncCommit?.remoteApply.lifecyclesPerS,
    "(f) local lifecycles/s": r.syncCommit?.local.lifecyclesPerS,
    ...Object.fromEntries(r.endToEnd.flatMap((x) => [
      [`(e) ${x.gateways}+${x.workers} ${x.concurrency} clients tasks/s`, x.tasksPerS],
      [`(e) ${x.gateways}+${x.workers} ${x.concurrency} clients commits/task`, x.commitsPerTask],
      [`(e) ${x.gateways}+${x.workers} ${x.concurrency} clients gateway CPU ms/task`, x.gatewayCpuMsPerTask],
      [`(e) ${x.gateways}+${x.workers} ${x.concurrency} clients worker CPU ms/task`, x.workerCpuMsPerTask],
    ])),
  };
  const missing = Object.entries(figures).filter(([, v]) => !(Number.isFinite(v) && v > 0));
  const httpRuns = Object.keys(figures).filter((k) => k.startsWith("(c) ")).length;
  if (httpRuns !== 6) missing.push(["(c) six HTTP runs (3 servers x 1 and 32 conn), got " + httpRuns]);
  // 1 + 1, then 2 + 2 with the same clients and with twice as many.
  if (r.endToEnd.length !== 3 || missing.length > 0) {
    console.error("bench smoke: missing figures:", missing.map(([k]) => k).join(", ") || "an end-to-end run");
    process.exit(1);
  }
  console.log(`bench smoke: all ${Object.keys(figures).length} figures present`);
' "$out/bench.json"
