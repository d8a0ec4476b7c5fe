/**
 * Where the fixed-rate create tail comes from: creates at RATE/s for SECONDS against one gateway
 * and WORKERS workers (from their builds), each reply's latency from its scheduled send time, and
 * Postgres's view of the bench database sampled every 20 ms from second 9 on. Prints the
 * quarter-seconds after warm-up whose slowest create took over 20 ms, p50/p99 after warm-up, how
 * late the sender itself was (its own share of those latencies), the CPU each process spent per
 * create between warm-up and the sampling (from /proc: gateway, workers, every postgres and
 * redis-server process, this probe), and every statement seen running for more than 10 ms with
 * what it waited on. WORKER_NICE=n renices the workers (a diagnostic: how much of the tail is the
 * workers' share of the cores). TRACE_GC=1 runs gateway and workers with `--trace-gc-nvp` and
 * prints, after warm-up, each one's scavenges (count, pauses, the share of allocated bytes they
 * promoted) and every mark-compact on the probe's clock, next to the slow quarter-seconds.
 * NODE_ARGS='--flag …' passes more flags to the gateway's and workers' node (a V8 tiering flag, say).
 * REQUEST=realistic sends the realistic workflow's task-creating call (the MRTR retry, one round
 * first) instead of the no-input task, as the bench's realistic create line does: each task then
 * runs its first step and parks at its pause.
 *
 *   RATE=200 SECONDS=13 WORKERS=1 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/create-stall-probe.ts
 */
import { setPriority } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { postgresBaseUrl } from '@mcp-tasks/testing';
import { REALISTIC_TOOL_MODULE } from '@mcp-tasks/tools/bench';
import pg from 'pg';
import { Pool } from 'undici';
import { startProbeStack } from './probe-stack.js';
import { createTaskRequest, sendMcp } from './mcp-requests.js';
import { creatingCall, labelRound } from './realistic-requests.js';
import { pidsNamed, processCpuMs, processStartMs } from './cpu.js';
import { parseGcTrace, summarizeGc } from './gc-trace.js';

const rate = Number(process.env.RATE ?? 200);
const seconds = Number(process.env.SECONDS ?? 13);
const workers = Number(process.env.WORKERS ?? 1);
const WARM_UP_MS = 3_000;
/** When the pg_stat_activity sampling starts (it costs Postgres CPU of its own). */
const SAMPLING_FROM_MS = 9_000;

const traceGc = process.env.TRACE_GC === '1';
const realistic = process.env.REQUEST === 'realistic';
const { stack, database, close } = await startProbeStack('stall', workers, {
  nodeArgs: [
    ...(traceGc ? ['--trace-gc-nvp'] : []),
    ...(process.env.NODE_ARGS ?? '').split(' ').filter(Boolean),
  ],
  env: realistic ? { MCP_TOOL_MODULES: REALISTIC_TOOL_MODULE } : {},
});
const workerNice = process.env.WORKER_NICE;
if (workerNice !== undefined)
  for (const worker of stack.workers) setPriority(worker.child.pid!, Number(workerNice));

const cpuGroups: Record<string, number[]> = {
  gateway: [stack.gateways[0]!.process.child.pid!],
  workers: stack.workers.map((worker) => worker.child.pid!),
  postgres: pidsNamed('postgres'),
  redis: pidsNamed('redis-server'),
};
const cpuSnapshot = (): Record<string, number> => {
  const snapshot: Record<string, number> = {};
  for (const [group, pids] of Object.entries(cpuGroups)) {
    // A process gone meanwhile (a Postgres backend closing) counts nothing.
    snapshot[group] = pids.reduce((sum, pid) => {
      try {
        return sum + processCpuMs(pid);
      } catch {
        return sum;
      }
    }, 0);
  }
  const own = process.cpuUsage();
  snapshot.probe = (own.user + own.system) / 1_000;
  return snapshot;
};
const monitor = new pg.Client({ connectionString: await postgresBaseUrl() });
await monitor.connect();
const http = new Pool(stack.gateways[0]!.url);

const start = performance.now();
const replies: { sentAtMs: number; latencyMs: number; lateMs: number }[] = [];
const running: string[] = [];
const cpuWindow = (async () => {
  await sleep(WARM_UP_MS);
  const before = cpuSnapshot();
  await sleep(SAMPLING_FROM_MS - WARM_UP_MS);
  const after = cpuSnapshot();
  const creates = (rate * (SAMPLING_FROM_MS - WARM_UP_MS)) / 1_000;
  return Object.keys(after)
    .map((group) => `${group} ${((after[group]! - before[group]!) / creates).toFixed(2)}`)
    .join(', ');
})();
const sampling = (async () => {
  await sleep(SAMPLING_FROM_MS);
  while (performance.now() - start < seconds * 1_000) {
    const at = ((performance.now() - start) / 1_000).toFixed(2);
    const { rows } = await monitor.query<{ who: string; waited: string; ms: number; q: string }>(
      `SELECT application_name AS who, coalesce(wait_event_type || ':' || wait_event, 'cpu') AS waited,
              extract(epoch FROM now() - query_start) * 1000 AS ms, left(query, 60) AS q
       FROM pg_stat_activity
       WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()`,
      [database.name],
    );
    for (const row of rows) {
      if (row.ms > 10)
        running.push(`${at}s ${row.who} ${row.waited} ${Math.round(row.ms)} ms ${row.q}`);
    }
    await sleep(20);
  }
})();

// A requestState serves every create (bound to caller, tool and arguments), as in the bench.
const requestState = realistic
  ? ((await sendMcp(stack.gateways[0]!.url, labelRound())).requestState as string)
  : undefined;
const nextRequest = (turn: number) =>
  requestState === undefined ? createTaskRequest() : creatingCall(requestState, turn);
const inFlight: Promise<void>[] = [];
for (let i = 0; i < rate * seconds; i += 1) {
  const scheduled = start + (i * 1_000) / rate;
  const wait = scheduled - performance.now();
  if (wait > 1) await sleep(wait);
  const spec = nextRequest(i);
  const lateMs = performance.now() - scheduled;
  inFlight.push(
    http
      .request({ method: 'POST', path: spec.path, headers: spec.headers, body: spec.body })
      .then(async (response) => {
        await response.body.text();
        replies.push({
          sentAtMs: scheduled - start,
          latencyMs: performance.now() - scheduled,
          lateMs,
        });
      }),
  );
}
await Promise.all(inFlight);
await sampling;

const measured = replies.filter((reply) => reply.sentAtMs > WARM_UP_MS);
const slowest = new Map<number, number>();
for (const { sentAtMs, latencyMs } of measured) {
  if (latencyMs <= 20) continue;
  const quarter = Math.floor(sentAtMs / 250) / 4;
  slowest.set(quarter, Math.max(slowest.get(quarter) ?? 0, Math.round(latencyMs)));
}
const sorted = measured.map((reply) => reply.latencyMs).sort((a, b) => a - b);
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
console.log(`${rate}/s for ${seconds} s, ${workers} worker(s), after ${WARM_UP_MS / 1_000} s:`);
console.log(`p50 ${at(0.5).toFixed(2)} ms, p99 ${at(0.99).toFixed(2)} ms`);
const late = measured.map((reply) => reply.lateMs).sort((a, b) => a - b);
const lateAt = (q: number) => late[Math.min(late.length - 1, Math.floor(late.length * q))]!;
console.log(`sender lateness p50 ${lateAt(0.5).toFixed(2)} ms, p99 ${lateAt(0.99).toFixed(2)} ms`);
console.log(
  `CPU ms per create, ${WARM_UP_MS / 1_000}–${SAMPLING_FROM_MS / 1_000} s (10 ms ticks): ${await cpuWindow}`,
);
console.log(
  `slow quarter-seconds (s: slowest ms): ${[...slowest].map(([s, ms]) => `${s}:${ms}`).join(' ')}`,
);
console.log(running.join('\n'));
if (traceGc) {
  // A child's GC lines count ms from its own start; /proc gives both starts (10 ms steps).
  const startedMs = processStartMs(process.pid) + start;
  const processes = [
    { name: 'gateway', child: stack.gateways[0]!.process },
    ...stack.workers.map((child, i) => ({ name: `worker ${i + 1}`, child })),
  ];
  for (const { name, child } of processes) {
    const offsetMs = processStartMs(child.child.pid!) - startedMs;
    const events = parseGcTrace(child.output()).map((event) => ({
      ...event,
      atMs: event.atMs + offsetMs,
    }));
    const gc = summarizeGc(events, WARM_UP_MS, seconds * 1_000);
    const markCompacts = gc.markCompacts
      .map(({ atMs, pauseMs }) => `${(atMs / 1_000).toFixed(2)}s (${pauseMs} ms)`)
      .join(' ');
    console.log(
      `GC ${name} after warm-up: ${gc.scavenges} scavenges, ${gc.scavengePauseMs.toFixed(0)} ms paused (max ${gc.maxScavengePauseMs} ms), ${(gc.promotedShare * 100).toFixed(1)}% of allocated bytes promoted; mark-compacts at ${markCompacts || 'none'}`,
    );
  }
}

await http.close();
await monitor.end();
await close();
