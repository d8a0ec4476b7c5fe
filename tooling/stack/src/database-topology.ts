import { startReplicaSet, startTransactionPooler } from '@mcp-tasks/testing';
import { ensurePostgres } from './preflight.js';

/**
 * `pnpm stack --topology`: what the processes' Postgres looks like. `direct`: DATABASE_URL
 * itself; `pooler`: a PgBouncer of its own in transaction mode in front of DATABASE_URL (the
 * session work on the direct URL, docs/deployment.md); `replicas`: a private primary and two
 * streaming replicas (one 1 s late) behind one round-robin reader endpoint, which the gateways
 * read through (needs root: the servers run as the postgres user). Another engine's topology
 * (a Redis cluster) is one more value beside these.
 */
export const STACK_TOPOLOGIES = ['direct', 'pooler', 'replicas'] as const;
export type StackTopology = (typeof STACK_TOPOLOGIES)[number];

export interface StackDatabase {
  /** DATABASE_URL for every process. */
  databaseUrl: string;
  /** What every process gets besides it. */
  env: Record<string, string>;
  /** One line for the banner, or undefined for `direct`. */
  description?: string;
  stop(): Promise<void>;
}

export async function startStackDatabase(
  topology: StackTopology,
  databaseUrl: string,
): Promise<StackDatabase> {
  if (topology === 'pooler') {
    await ensurePostgres(databaseUrl);
    const pooler = await startTransactionPooler(databaseUrl);
    return {
      databaseUrl: pooler.pooledUrl,
      env: pooler.env,
      description: `PgBouncer (transaction mode) on 127.0.0.1:${pooler.bouncer.port} in front of DATABASE_URL`,
      stop: () => pooler.bouncer.destroy(),
    };
  }
  if (topology === 'replicas') {
    const set = await startReplicaSet({ replicas: [{}, { recovery_min_apply_delay: '1s' }] });
    return {
      databaseUrl: set.primaryUrl(),
      env: { DATABASE_READ_URL: set.readerUrl() },
      description: `private primary :${set.primary.port}, replicas :${set.replicas.map((r) => r.port).join(', :')} (one 1 s late) behind reader endpoint :${set.readerEndpoint.port}`,
      stop: () => set.stop(),
    };
  }
  return { databaseUrl, env: {}, stop: () => Promise.resolve() };
}
