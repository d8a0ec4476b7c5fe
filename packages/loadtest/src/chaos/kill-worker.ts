import { pause, targetOf, type ChaosPlan } from './plan.js';

/** SIGKILL a worker in the middle of a step (one running a step when there is one), restart it. */
export const killWorker: ChaosPlan = {
  name: 'kill-worker',
  everyMs: 3_000,
  async round(ctx, record) {
    const busy = new Set(ctx.busyWorkers());
    const candidates = ctx.workers.filter((w) => busy.has(targetOf(w)));
    const worker = ctx.rng.pick(candidates.length > 0 ? candidates : ctx.workers);
    record('kill', targetOf(worker));
    worker.kill('SIGKILL');
    await worker.exited();
    await pause(500, new AbortController().signal);
    await worker.start();
    record('restart', targetOf(worker));
  },
};
