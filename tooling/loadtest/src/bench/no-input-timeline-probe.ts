/**
 * Where a no-input task's time goes in the bench's closed loop (issue 30): CLIENTS clients each
 * create the one-step task and wait for its end through the bench's Postgres watcher, against one
 * gateway and one worker for SECONDS; then, per task, the client's create and wait, and from the
 * task history the server's stages: created → claimed, claimed → ended, and ended → seen by the
 * watcher (the client's clock against the history's `at`, one machine); and the TCP segments a
 * task sends hop by hop (tcp-hops.ts; run it alone, or another run's hops count too).
 *
 *   CLIENTS=32 SECONDS=8 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/no-input-timeline-probe.ts
 *
 * APPS_ROOT=/path/to/another/checkout runs that tree's built gateway and worker instead.
 */
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Pool } from 'undici';
import { createLatencyRecorder, type LatencyRecorder } from '../report/latency.js';
import { startCompletionWatcher } from './completion-watcher.js';
import { createTaskRequest, sendMcp } from './mcp-requests.js';
import { startProbeStack } from './probe-stack.js';
import { describeHops, openSegmentMeter, stackRoles } from './tcp-hops.js';

const clients = Number(process.env.CLIENTS ?? 32);
const seconds = Number(process.env.SECONDS ?? 8);

const describe = (latency: LatencyRecorder): string => {
  const { p50, p95 } = latency.summary();
  return `p50 ${p50.toFixed(1)} ms  p95 ${p95.toFixed(1)} ms`;
};

/** Each task's history events by kind, ms since the epoch (the last of a kind wins). */
async function eventTimes(databaseUrl: string): Promise<Map<string, Record<string, number>>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ task_id: string; kind: string; ms: string }>(
      'SELECT task_id, kind, extract(epoch FROM at) * 1000 AS ms FROM task_events ORDER BY id',
    );
    const byTask = new Map<string, Record<string, number>>();
    for (const row of rows) {
      const kinds = byTask.get(row.task_id) ?? {};
      kinds[row.kind] = Number(row.ms);
      byTask.set(row.task_id, kinds);
    }
    return byTask;
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const probe = await startProbeStack('no-input-timeline', 1, {
    workerConcurrency: clients,
    appsRoot: process.env.APPS_ROOT,
  });
  const gateway = probe.stack.gateways[0]!;
  const http = new Pool(gateway.url, { keepAliveTimeout: 60_000 });
  const watcher = startCompletionWatcher(probe.database.connectionString);
  const creates = createLatencyRecorder();
  const waits = createLatencyRecorder();
  const seenAt = new Map<string, number>();
  // The messages a task costs, hop by hop (tcp-hops.ts).
  const segments = await openSegmentMeter();
  try {
    const deadline = performance.now() + seconds * 1_000;
    const client = async () => {
      while (performance.now() < deadline) {
        const sent = performance.now();
        const created = await sendMcp(gateway.url, createTaskRequest(), http);
        const answered = performance.now();
        const taskId = created.taskId as string;
        await watcher.waitFor(taskId);
        seenAt.set(taskId, Date.now());
        creates.record(answered - sent);
        waits.record(performance.now() - answered);
      }
    };
    await Promise.all(Array.from({ length: clients }, client));
    const hops = (await segments.stop()).byHop(
      stackRoles({
        gateway: [gateway.process.child.pid!],
        worker: [probe.stack.workers[0]!.child.pid!],
        probe: [process.pid],
      }),
    );
    const tasks = creates.summary().count;
    console.log(`${tasks} tasks in ${seconds} s: ${(tasks / seconds).toFixed(1)}/s`);
    console.log(describeHops(hops, tasks, 'task'));
    console.log(`client: create ${describe(creates)}; wait for the end ${describe(waits)}`);
    const stages: Record<string, LatencyRecorder> = {
      'created → claimed': createLatencyRecorder(),
      'claimed → ended': createLatencyRecorder(),
      'ended → seen': createLatencyRecorder(),
    };
    for (const [taskId, at] of await eventTimes(probe.database.connectionString)) {
      const ended = at.completed ?? at.failed;
      const seen = seenAt.get(taskId);
      if (at.created !== undefined && at.claimed !== undefined)
        stages['created → claimed']!.record(at.claimed - at.created);
      if (at.claimed !== undefined && ended !== undefined)
        stages['claimed → ended']!.record(ended - at.claimed);
      if (ended !== undefined && seen !== undefined) stages['ended → seen']!.record(seen - ended);
    }
    console.log('server (task history; `at` is each transaction’s start):');
    for (const [stage, latency] of Object.entries(stages))
      console.log(`  ${stage.padEnd(18)} ${describe(latency)}  (${latency.summary().count} tasks)`);
  } finally {
    await watcher.stop();
    await http.close();
    await probe.close();
  }
}

await main();
