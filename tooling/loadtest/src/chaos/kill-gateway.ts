import { pause, targetOf, type ChaosPlan } from './plan.js';

/** SIGKILL a random gateway, wait a moment, start it again on the same port. */
export const killGateway: ChaosPlan = {
  name: 'kill-gateway',
  everyMs: 3_000,
  async round(ctx, record) {
    const gateway = ctx.rng.pick(ctx.gateways);
    record('kill', targetOf(gateway), { pid: gateway.pid ?? null });
    gateway.kill('SIGKILL');
    const exit = await gateway.exited();
    await pause(1_000);
    await gateway.start();
    // How the killed process ended, and the new one's pid.
    record('restart', targetOf(gateway), { exit, pid: gateway.pid ?? null });
  },
};
