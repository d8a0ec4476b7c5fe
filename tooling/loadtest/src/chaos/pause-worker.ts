import { pause, pickBusyWorker, settledState, targetOf, type ChaosPlan } from './plan.js';

/**
 * SIGSTOP a worker (a busy one when there is one) for twice its lease, then SIGCONT. The events
 * carry the process's /proc state once the signal took effect (`T` when stopped).
 */
export const pauseWorker: ChaosPlan = {
  name: 'pause-worker',
  everyMs: 3_000,
  async round(ctx, record) {
    const worker = pickBusyWorker(ctx);
    const pid = worker.pid;
    worker.kill('SIGSTOP');
    record('pause', targetOf(worker), {
      pid: pid ?? null,
      state: await settledState(pid, (s) => s === 'T'),
    });
    await pause(ctx.leaseMs * 2);
    worker.kill('SIGCONT');
    record('resume', targetOf(worker), {
      pid: pid ?? null,
      state: await settledState(pid, (s) => s !== 'T'),
    });
  },
};
