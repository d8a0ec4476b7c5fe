/**
 * Where the fixed-rate create tail comes from: creates at RATE/s for SECONDS against one gateway
 * and WORKERS workers (from their builds), each reply's latency from its scheduled send time, and
 * Postgres's view of the bench database sampled every 20 ms from second 9 on. Prints the
 * quarter-seconds after warm-up whose slowest create took over 20 ms, p50/p99 after warm-up, how
 * late the sender itself was (its own share of those latencies), and
 * every statement seen running for more than 10 ms with what it waited on.
 *
 *   RATE=200 SECONDS=13 WORKERS=1 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     packages/loadtest/src/bench/create-stall-probe.ts
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { postgresBaseUrl } from '@mcp-tasks/testing';
import pg from 'pg';
import { Pool } from 'undici';
import { startProbeStack } from './probe-stack.js';
import { createTaskRequest } from './mcp-requests.js';

const rate = Number(process.env.RATE ?? 200);
const seconds = Number(process.env.SECONDS ?? 13);
const workers = Number(process.env.WORKERS ?? 1);
const WARM_UP_MS = 3_000;

const { stack, database, close } = await startProbeStack('stall', workers);
const monitor = new pg.Client({ connectionString: await postgresBaseUrl() });
await monitor.connect();
const http = new Pool(stack.gateways[0]!.url);

const start = performance.now();
const replies: { sentAtMs: number; latencyMs: number; lateMs: number }[] = [];
const running: string[] = [];
const sampling = (async () => {
  await sleep(9_000);
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

const inFlight: Promise<void>[] = [];
for (let i = 0; i < rate * seconds; i += 1) {
  const scheduled = start + (i * 1_000) / rate;
  const wait = scheduled - performance.now();
  if (wait > 1) await sleep(wait);
  const spec = createTaskRequest();
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
  `slow quarter-seconds (s: slowest ms): ${[...slowest].map(([s, ms]) => `${s}:${ms}`).join(' ')}`,
);
console.log(running.join('\n'));

await http.close();
await monitor.end();
await close();
