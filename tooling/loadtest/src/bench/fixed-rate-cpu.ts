import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchStack } from './bench-stack.js';
import { startCompletionWatcher } from './completion-watcher.js';
import { runConstantRate } from './constant-rate.js';
import { cpuNsBetween, openBackendCpuMeter } from './backend-cpu.js';
import { processCpuMs } from './cpu.js';
import { cpuMsPerTask } from './cpu-per-task.js';
import { createTaskRequest, sendMcp } from './mcp-requests.js';

export interface FixedRateCpuResult {
  ratePerS: number;
  /** The measured window's length, s (the warm-up before it is not counted). */
  windowS: number;
  /** Tasks seen ending within the window, and their rate: about ratePerS below saturation. */
  tasks: number;
  tasksPerS: number;
  /**
   * Tasks created but not ended when the window closed. A few (rate × end-to-end latency) is
   * steady state; hundreds mean the rate is past what the stack keeps up with.
   */
  openAtEnd: number;
  gatewayCpuMsPerTask: number;
  workerCpuMsPerTask: number;
  /** Gateway + worker: the figure the ratios are of. */
  cpuMsPerTask: number;
  /**
   * With `postgresCpu`: the CPU of the stack's Postgres backends (this database's, pools named
   * `mcp-tasks…`) per task; null when not asked or the server is not a local process.
   */
  postgresCpuMsPerTask: number | null;
  createP50Ms: number;
  createP99Ms: number;
  failures: number;
}

/** After the load stops, the last tasks get this long to end before the run counts as failed. */
const DRAIN_TIMEOUT_MS = 60_000;

/**
 * CPU per task at a fixed arrival rate: the one-step no-input task (createTaskRequest) sent
 * open-loop at ratePerS to the stack's first gateway for warmupS + durationS, each created task
 * waited for by the completion watcher (Postgres, not the gateways). The gateways' and workers'
 * utime + stime are read from /proc at the end of the warm-up and at the end of the window; CPU
 * per task is their growth over the tasks seen ending in between. Under saturation the batches
 * the service forms depend on the rate alone, so two runs at the same rate do the same work per
 * task, where a closed loop's batches (and so its CPU per task) follow its throughput.
 */
export async function runFixedRateCpu(options: {
  stack: BenchStack;
  databaseUrl: string;
  ratePerS: number;
  durationS: number;
  warmupS: number;
  /** Also count the Postgres backends' CPU (a server on this host): where triggers do their work. */
  postgresCpu?: boolean;
}): Promise<FixedRateCpuResult> {
  const { stack } = options;
  const watcher = startCompletionWatcher(options.databaseUrl);
  let created = 0;
  let ended = 0;
  const endings: Promise<void>[] = [];
  const sample = () => ({
    at: performance.now(),
    gateways: stack.gateways.reduce((sum, g) => sum + processCpuMs(g.process.child.pid!), 0),
    workers: stack.workers.reduce((sum, w) => sum + processCpuMs(w.child.pid!), 0),
    created,
    ended,
  });
  try {
    // One task end to end before the load: on a starved machine a cold stack (pools, JIT) ended
    // nothing inside a short warm-up and window, and the figure came out NaN (seen in CI).
    const { taskId: primedTaskId } = await sendMcp(stack.gateways[0]!.url, createTaskRequest());
    if (typeof primedTaskId !== 'string') throw new Error('the priming create returned no taskId');
    await watcher.waitFor(primedTaskId);
    const load = runConstantRate({
      baseUrl: stack.gateways[0]!.url,
      request: createTaskRequest,
      ratePerS: options.ratePerS,
      durationS: options.warmupS + options.durationS,
      isSuccess: (body) => body.includes('"resultType":"task"'),
      onSuccess: (body) => {
        created += 1;
        const { taskId } = (JSON.parse(body) as { result: { taskId: string } }).result;
        endings.push(watcher.waitFor(taskId).then(() => void (ended += 1)));
      },
    });
    await sleep(options.warmupS * 1_000);
    const meter =
      options.postgresCpu === true
        ? await openBackendCpuMeter(options.databaseUrl, { prefix: 'mcp-tasks' })
        : null;
    const backendsBefore = await meter?.snapshot();
    const before = sample();
    await sleep(options.durationS * 1_000);
    const after = sample();
    const backendsAfter = await meter?.snapshot();
    await meter?.close();
    const sent = await load;
    const drained = await Promise.race([
      Promise.all(endings).then(() => true),
      sleep(DRAIN_TIMEOUT_MS).then(() => false),
    ]);
    if (!drained)
      throw new Error(
        `${created - ended} tasks still open ${DRAIN_TIMEOUT_MS / 1_000} s after the load stopped: ${options.ratePerS}/s is past what this stack keeps up with`,
      );
    const tasks = after.ended - before.ended;
    const windowS = (after.at - before.at) / 1_000;
    const gateway = cpuMsPerTask(before.gateways, after.gateways, tasks);
    const worker = cpuMsPerTask(before.workers, after.workers, tasks);
    return {
      ratePerS: options.ratePerS,
      windowS,
      tasks,
      tasksPerS: tasks / windowS,
      openAtEnd: after.created - after.ended,
      gatewayCpuMsPerTask: gateway,
      workerCpuMsPerTask: worker,
      cpuMsPerTask: gateway + worker,
      postgresCpuMsPerTask:
        backendsBefore === undefined || backendsAfter === undefined || tasks === 0
          ? null
          : cpuNsBetween(backendsBefore, backendsAfter) / 1e6 / tasks,
      createP50Ms: sent.latency.p50,
      createP99Ms: sent.latency.p99,
      failures: sent.failures,
    };
  } finally {
    await watcher.stop();
  }
}

/** "0.41 CPU ms/task (gateway 0.20, worker 0.21), 2,000 tasks at 199.9/s, …": one run's line. */
export const fixedRateLine = (x: FixedRateCpuResult): string =>
  `${x.cpuMsPerTask.toFixed(3)} CPU ms/task (gateway ${x.gatewayCpuMsPerTask.toFixed(3)}, worker ${x.workerCpuMsPerTask.toFixed(3)}${x.postgresCpuMsPerTask === null ? '' : `; Postgres backends ${x.postgresCpuMsPerTask.toFixed(3)}`}), ${x.tasks} tasks in ${x.windowS.toFixed(1)} s (${x.tasksPerS.toFixed(1)}/s), ${x.openAtEnd} open at the end, create p50 ${x.createP50Ms.toFixed(2)} / p99 ${x.createP99Ms.toFixed(2)} ms, failures ${x.failures}`;
