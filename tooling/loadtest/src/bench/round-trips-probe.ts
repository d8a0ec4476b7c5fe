/**
 * What each request of the realistic workflow costs in system calls when it is alone (issue 30):
 * one client sends N of each kind in turn — the MRTR round, the creating call (and the worker's
 * run to the pause), the answer (and the worker's run to the end), a whole lifecycle followed by
 * a `subscriptions/listen` stream that answers the pause, then N no-input creates run to their
 * end — and the gateway's and worker's write and read system calls (/proc/PID/io) are
 * counted per request. Alone means no natural batch forms: these are the round trips a request
 * costs before batching shares them, the count that sets its price at low load.
 *
 *   N=200 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/round-trips-probe.ts
 *
 * APPS_ROOT=/path/to/another/checkout runs that tree's built gateway and worker instead.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { REALISTIC_TOOL_MODULE } from '@mcp-tasks/tools/bench';
import { Pool } from 'undici';
import { startCompletionWatcher } from './completion-watcher.js';
import { processIoSyscalls } from './cpu.js';
import { createTaskRequest, sendMcp } from './mcp-requests.js';
import { approval, creatingCall, followAndAnswer, labelRound } from './realistic-requests.js';
import { startProbeStack } from './probe-stack.js';

const n = Number(process.env.N ?? 200);
/** Long enough for the processes' own follow-up (a completion, a pointer delete) to land. */
const SETTLE_MS = 300;

async function main(): Promise<void> {
  const probe = await startProbeStack('round-trips', 1, {
    env: { MCP_TOOL_MODULES: REALISTIC_TOOL_MODULE },
    appsRoot: process.env.APPS_ROOT,
  });
  const gateway = probe.stack.gateways[0]!;
  const pids = [gateway.process.child.pid!, probe.stack.workers[0]!.child.pid!];
  const http = new Pool(gateway.url, { keepAliveTimeout: 60_000 });
  const watcher = startCompletionWatcher(probe.database.connectionString);
  const measure = async (label: string, send: (i: number) => Promise<void>) => {
    await sleep(SETTLE_MS);
    const before = pids.map(processIoSyscalls);
    const startedAt = performance.now();
    for (let i = 0; i < n; i += 1) await send(i);
    const msEach = (performance.now() - startedAt) / n;
    await sleep(SETTLE_MS);
    const after = pids.map(processIoSyscalls);
    const per = (process: number, kind: 'writes' | 'reads') =>
      ((after[process]![kind] - before[process]![kind]) / n).toFixed(2);
    console.log(
      `${label.padEnd(34)} gateway ${per(0, 'writes')} / ${per(0, 'reads')}   worker ${per(1, 'writes')} / ${per(1, 'reads')}   (${msEach.toFixed(1)} ms each)`,
    );
  };
  try {
    const requestState = (await sendMcp(gateway.url, labelRound(), http)).requestState as string;
    console.log(`write / read system calls per request, ${n} of each, one at a time:`);
    await measure('MRTR round', async () => {
      await sendMcp(gateway.url, labelRound(), http);
    });
    const ids: string[] = [];
    await measure('creating call, worker to the pause', async (i) => {
      const created = await sendMcp(gateway.url, creatingCall(requestState, i), http);
      ids.push(created.taskId as string);
      await watcher.waitFor(created.taskId as string, ['input_required']);
    });
    await measure('answer, worker to the end', async (i) => {
      await sendMcp(gateway.url, approval(ids[i]!), http);
      await watcher.waitFor(ids[i]!);
    });
    await measure('watched lifecycle (round to end)', async (i) => {
      const round = await sendMcp(gateway.url, labelRound(), http);
      const created = await sendMcp(
        gateway.url,
        creatingCall(round.requestState as string, n + i),
        http,
      );
      await followAndAnswer(gateway.url, http, created.taskId as string);
    });
    await measure('no-input create, worker to the end', async () => {
      const created = await sendMcp(gateway.url, createTaskRequest(), http);
      await watcher.waitFor(created.taskId as string);
    });
  } finally {
    await http.close();
    await watcher.stop();
    await probe.close();
  }
}

await main();
