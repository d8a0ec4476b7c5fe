import { pause, pickBusyWorker, targetOf, type ChaosPlan } from './plan.js';

/** SIGKILL a worker in the middle of a step (one running a step when there is one), restart it. */
export const killWorker: ChaosPlan = {
  name: 'kill-worker',
  everyMs: 3_000,
  async round(ctx, record) {
    const worker = pickBusyWorker(ctx);
    const pid = worker.pid ?? null;
    record('kill', targetOf(worker), { pid });
    worker.kill('SIGKILL');
    const exit = await worker.exited();
    await pause(500);
    await worker.start();
    // How the killed process ended, and the new one's pid.
    record('restart', targetOf(worker), { exit, pid: worker.pid ?? null });
  },
};
