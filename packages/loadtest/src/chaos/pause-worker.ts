import { pause, targetOf, type ChaosPlan } from './plan.js';

/** SIGSTOP a worker (a busy one when there is one) for twice its lease, then SIGCONT. */
export const pauseWorker: ChaosPlan = {
  name: 'pause-worker',
  everyMs: 3_000,
  async round(ctx, record) {
    const busy = new Set(ctx.busyWorkers());
    const candidates = ctx.workers.filter((w) => busy.has(targetOf(w)));
    const worker = ctx.rng.pick(candidates.length > 0 ? candidates : ctx.workers);
    record('pause', targetOf(worker));
    worker.kill('SIGSTOP');
    await pause(ctx.leaseMs * 2, new AbortController().signal);
    worker.kill('SIGCONT');
    record('resume', targetOf(worker));
  },
};
