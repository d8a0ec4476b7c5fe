import {
  startPgBouncer,
  startReplicaSet,
  type PgBouncer,
  type PostgresServer,
  type ReplicaSet,
} from '@mcp-tasks/testing';
import pg from 'pg';

/**
 * What the stack's Postgres looks like (`--topology`): `direct` (the default: Postgres itself),
 * `pooler` (a PgBouncer in transaction mode in front of it, the session work on the direct URL)
 * or `replicas` (a primary and two streaming replicas, one replaying 1 s late, behind one
 * round-robin reader endpoint that the gateways read through). Each is set up here; a topology
 * of another engine (e.g. a Redis cluster) sits beside them in TOPOLOGIES.
 */
export const DATABASE_TOPOLOGIES = ['direct', 'pooler', 'replicas'] as const;
export type DatabaseTopology = (typeof DATABASE_TOPOLOGIES)[number];

/** The per-statement bound a transaction pooler cannot carry, set on the database itself. */
const POOLED_STATEMENT_TIMEOUT = '10s';

/** A primary and two replicas for `replicas`: the create's wait and the read may hit either. */
export async function startReplicaTopology(): Promise<ReplicaSet> {
  return startReplicaSet({ replicas: [{}, { recovery_min_apply_delay: '1s' }] });
}

export interface PoolerTopology {
  bouncer: PgBouncer;
  /** DATABASE_URL for the stack: the database through the pooler. */
  pooledUrl: string;
  /** The environment every process gets besides DATABASE_URL. */
  env: Record<string, string>;
}

/**
 * A PgBouncer in transaction mode in front of `databaseUrl`, with the settings that work there
 * (docs/deployment.md): the database's own statement_timeout, DATABASE_DIRECT_URL for LISTEN, the
 * sweeper's lock and migrations, and DATABASE_POOLER=transaction.
 */
export async function startPoolerTopology(databaseUrl: string): Promise<PoolerTopology> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  try {
    await admin.query(
      `ALTER DATABASE "${name.replaceAll('"', '""')}" SET statement_timeout = '${POOLED_STATEMENT_TIMEOUT}'`,
    );
  } finally {
    await admin.end();
  }
  const bouncer = await startPgBouncer({ target: databaseUrl, poolMode: 'transaction' });
  return {
    bouncer,
    pooledUrl: bouncer.urlFor(databaseUrl),
    env: { DATABASE_DIRECT_URL: databaseUrl, DATABASE_POOLER: 'transaction' },
  };
}

/** A private server as a chaos plan's restartable `postgres` (stop fast, start again). */
export function restartable(server: PostgresServer) {
  return {
    name: 'postgres' as const,
    pid: () => server.pid(),
    async restart() {
      await server.stop('fast');
      await server.start();
    },
  };
}
