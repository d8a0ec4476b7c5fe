import { pause, type ChaosPlan } from './plan.js';

/**
 * `--topology pooler`: restart the PgBouncer every process's DATABASE_URL leads to (SIGTERM:
 * every client and server connection closed at once, then a fresh process on the same port).
 */
export const poolerRestart: ChaosPlan = {
  name: 'pooler-restart',
  needs: ['pooler'],
  topologies: ['pooler'],
  everyMs: 5_000,
  async round(ctx, record) {
    const pooler = ctx.pooler;
    if (pooler === undefined) throw new Error('pooler-restart needs --topology pooler');
    record('restart', 'pooler', { pid: (await pooler.pid()) ?? null });
    await pooler.restart();
    record('restarted', 'pooler', { pid: (await pooler.pid()) ?? null });
  },
};

/**
 * `--topology replicas`: crash one replica behind the reader endpoint (immediate stop), leave it
 * down a moment while reads and the creates' readability polls reach it, then start it again.
 */
export const killReplica: ChaosPlan = {
  name: 'kill-replica',
  needs: ['replicas'],
  topologies: ['replicas'],
  everyMs: 4_000,
  async round(ctx, record) {
    const replicas = ctx.replicas ?? [];
    if (replicas.length === 0) throw new Error('kill-replica needs --topology replicas');
    const replica = ctx.rng.pick(replicas);
    record('kill', replica.name, { pid: (await replica.pid()) ?? null });
    await replica.stop('immediate');
    await pause(1_000);
    await replica.start();
    record('restart', replica.name, { pid: (await replica.pid()) ?? null });
  },
};
