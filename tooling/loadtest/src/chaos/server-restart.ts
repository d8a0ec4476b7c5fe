import type { ChaosPlan, RestartableServer } from './plan.js';

/** Restart the harness's own server (never a shared one) while the load runs. */
function serverRestart(server: RestartableServer['name']): ChaosPlan {
  return {
    name: `${server}-restart`,
    needs: [server],
    everyMs: 5_000,
    async round(ctx, record) {
      const target = ctx.servers[server];
      if (target === undefined)
        throw new Error(`${server}-restart needs the harness's own ${server}`);
      record('restart', server, { pid: (await target.pid()) ?? null });
      await target.restart();
      // A new server process: its pid differs from the one the restart began with.
      record('restarted', server, { pid: (await target.pid()) ?? null });
    },
  };
}

export const redisRestart = serverRestart('redis');
export const postgresRestart = serverRestart('postgres');
