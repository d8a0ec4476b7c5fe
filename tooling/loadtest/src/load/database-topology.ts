import {
  startReplicaSet,
  startTransactionPooler,
  type PostgresServer,
  type ReplicaSet,
} from '@mcp-tasks/testing';

/**
 * What the stack's Postgres looks like (`--topology`): `direct` (the default: Postgres itself),
 * `pooler` (a PgBouncer in transaction mode in front of it, the session work on the direct URL)
 * or `replicas` (a primary and two streaming replicas, one replaying 1 s late, behind one
 * round-robin reader endpoint that the gateways read through). A topology of another
 * engine (e.g. a Redis cluster) is one more value beside these.
 */
export const DATABASE_TOPOLOGIES = ['direct', 'pooler', 'replicas'] as const;
export type DatabaseTopology = (typeof DATABASE_TOPOLOGIES)[number];

/**
 * How stale a `tasks/get` may be under `replicas`: replicas are asynchronous (one replays 1 s
 * late), so a read may show an answered input still pending for up to the lag, longer while the
 * primary restarts and they catch up. The checker allows that much (never a "not found").
 */
export const REPLICA_STALE_READ_MS = 10_000;

/** A primary and two replicas for `replicas`: the create's wait and the read may hit either. */
export async function startReplicaTopology(): Promise<ReplicaSet> {
  return startReplicaSet({ replicas: [{}, { recovery_min_apply_delay: '1s' }] });
}

/** `pooler`: a PgBouncer in transaction mode in front of the database (packages/testing). */
export const startPoolerTopology = startTransactionPooler;

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
