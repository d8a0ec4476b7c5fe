import { targetOf, type ChaosPlan } from './plan.js';

/** A rollout: every gateway, then every worker, SIGTERM (drain) and start again, one at a time. */
export const rolling: ChaosPlan = {
  name: 'rolling',
  everyMs: 2_000,
  async round(ctx, record) {
    for (const process of [...ctx.gateways, ...ctx.workers]) {
      if (ctx.signal.aborted) return;
      record('sigterm', targetOf(process), { pid: process.pid ?? null });
      const exit = await process.stop();
      await process.start();
      // How the old process ended (0: drained and exited by itself), and the new one's pid.
      record('restart', targetOf(process), { exit, pid: process.pid ?? null });
    }
  },
};
