import { pause, pickBusyWorker, targetOf, type ChaosPlan } from './plan.js';

/** SIGSTOP a worker (a busy one when there is one) for twice its lease, then SIGCONT. */
export const pauseWorker: ChaosPlan = {
  name: 'pause-worker',
  everyMs: 3_000,
  async round(ctx, record) {
    const worker = pickBusyWorker(ctx);
    record('pause', targetOf(worker));
    worker.kill('SIGSTOP');
    await pause(ctx.leaseMs * 2);
    worker.kill('SIGCONT');
    record('resume', targetOf(worker));
  },
};
