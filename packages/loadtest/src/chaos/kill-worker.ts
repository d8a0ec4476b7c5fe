import { pause, pickBusyWorker, targetOf, type ChaosPlan } from './plan.js';

/** SIGKILL a worker in the middle of a step (one running a step when there is one), restart it. */
export const killWorker: ChaosPlan = {
  name: 'kill-worker',
  everyMs: 3_000,
  async round(ctx, record) {
    const worker = pickBusyWorker(ctx);
    record('kill', targetOf(worker));
    worker.kill('SIGKILL');
    await worker.exited();
    await pause(500);
    await worker.start();
    record('restart', targetOf(worker));
  },
};
