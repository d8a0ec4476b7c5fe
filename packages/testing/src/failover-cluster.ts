import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { makePostgresDir, startPostgresServer, type PostgresServer } from './postgres-server.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

/**
 * A primary and a streaming hot standby of its own, behind two endpoints it controls: `writeUrl`
 * (what DATABASE_URL names: the DNS name or virtual IP a managed Postgres moves at a failover) and
 * `readUrl` (what DATABASE_READ_URL names: the standby). A failover kills the primary (immediate:
 * a crash), promotes the standby, and moves the write endpoint to it; the old primary never comes
 * back. A new standby can then be built from the new primary (pg_basebackup), so a drill can fail
 * over again.
 *
 * Durability (`synchronous: true`, the default): every commit waits until the standby has applied
 * it (`synchronous_commit = remote_apply`, `synchronous_standby_names = '*'`), so whatever a client
 * was told, or could read on either server, is on the standby the failover promotes. A promoted
 * standby has no standby of its own until one is built, so it commits alone meanwhile (it is not
 * made to wait for a standby that does not exist yet).
 */
export interface FailoverCluster {
  /** postgres://…@endpoint/DATABASE: follows the primary across failovers. */
  writeUrl(database?: string): string;
  /** postgres://…@read-endpoint/DATABASE: the current standby (the primary while it has none). */
  readUrl(database?: string): string;
  readonly primary: PostgresServer;
  readonly standby: PostgresServer | undefined;
  /** Failovers done so far. */
  readonly failovers: number;
  /**
   * Kills the primary (pg_ctl stop -m immediate), promotes the standby, makes it commit alone, and
   * switches the write endpoint to it (resetting every connection still open through it).
   */
  failover(): Promise<FailoverEvidence>;
  /**
   * Builds a new standby from the current primary (pg_basebackup -R), waits until it streams and
   * has replayed everything, makes it synchronous (when the cluster is), and points the read
   * endpoint at it.
   */
  addStandby(): Promise<{ standby: string; pid: number | null }>;
  /** Crashes and restarts the current primary in place (the postgres-restart chaos). */
  restartPrimary(): Promise<void>;
  stop(): Promise<void>;
}

export interface FailoverEvidence {
  oldPrimary: string;
  oldPrimaryPid: number | null;
  newPrimary: string;
  newPrimaryPid: number | null;
  /** The WAL position the promoted server had replayed when it was promoted. */
  promotedAtLsn: string | null;
  killMs: number;
  promoteMs: number;
}

export interface FailoverClusterOptions {
  /** remote_apply + synchronous_standby_names = '*' (default true); false: asynchronous. */
  synchronous?: boolean;
  /** Databases created on the first primary (each replicated like everything else). */
  databases?: string[];
}

async function admin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function setSynchronousStandbys(server: PostgresServer, names: string): Promise<void> {
  await admin(server.url(), async (client) => {
    await client.query(
      names === ''
        ? 'ALTER SYSTEM RESET synchronous_standby_names'
        : `ALTER SYSTEM SET synchronous_standby_names = '${names}'`,
    );
    await client.query('SELECT pg_reload_conf()');
  });
}

/** Waits until `standby` streams from `primary` and has replayed all the primary had written. */
async function waitUntilCaughtUp(primary: PostgresServer, standby: PostgresServer): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const caughtUp = await admin(primary.url(), async (client) => {
      const { rows } = await client.query<{ ok: boolean }>(
        `SELECT replay_lsn >= pg_current_wal_lsn() AS ok FROM pg_stat_replication
          WHERE application_name = $1 AND state = 'streaming'`,
        [standby.name],
      );
      return rows[0]?.ok === true;
    });
    if (caughtUp) return;
    if (Date.now() > deadline) throw new Error(`standby ${standby.name} did not catch up in 60 s`);
    await sleep(100);
  }
}

export async function startFailoverCluster(
  options: FailoverClusterOptions = {},
): Promise<FailoverCluster> {
  const synchronous = options.synchronous ?? true;
  const dir = await makePostgresDir('mcpt-failover-');
  const primary = await startPostgresServer({ dir, name: 'pg-1' });
  await admin(primary.url(), async (client) => {
    // In postgresql.auto.conf, so every standby copied from it inherits the setting.
    if (synchronous) await client.query("ALTER SYSTEM SET synchronous_commit = 'remote_apply'");
    await client.query('SELECT pg_reload_conf()');
    for (const database of options.databases ?? [])
      await client.query(`CREATE DATABASE "${database}"`);
  });
  const writeProxy: TcpProxy = await startTcpProxy({ target: primary.url() });
  const readProxy: TcpProxy = await startTcpProxy({ target: primary.url() });
  const state: ClusterState = {
    dir,
    synchronous,
    generation: 1,
    primary,
    standby: undefined,
    failovers: 0,
    retired: [],
    writeProxy,
    readProxy,
  };

  const cluster: FailoverCluster = {
    writeUrl: (database) => writeProxy.urlFor(state.primary.url(database)),
    readUrl: (database) => readProxy.urlFor(state.primary.url(database)),
    get primary() {
      return state.primary;
    },
    get standby() {
      return state.standby;
    },
    get failovers() {
      return state.failovers;
    },
    addStandby: () => addStandby(state),
    failover: () => failOver(state),
    async restartPrimary() {
      await state.primary.stop('immediate');
      await state.primary.start();
    },
    async stop() {
      await Promise.allSettled([writeProxy.close(), readProxy.close()]);
      for (const server of [state.primary, state.standby, ...state.retired])
        await server?.destroy();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}

/** What a failover cluster is now: which server is which, and the endpoints in front of them. */
interface ClusterState {
  readonly dir: string;
  readonly synchronous: boolean;
  /** The last server's number (`pg-<generation>`). */
  generation: number;
  primary: PostgresServer;
  standby: PostgresServer | undefined;
  failovers: number;
  /** Killed primaries, destroyed on stop. */
  readonly retired: PostgresServer[];
  readonly writeProxy: TcpProxy;
  readonly readProxy: TcpProxy;
}

async function addStandby(state: ClusterState): Promise<{ standby: string; pid: number | null }> {
  if (state.standby !== undefined) throw new Error(`${state.standby.name} is already the standby`);
  state.generation += 1;
  const next = await startPostgresServer({
    dir: state.dir,
    name: `pg-${state.generation}`,
    // Its copy of postgresql.auto.conf names standbys ('*'): ignored until it is promoted,
    // and reset then (failover()).
    standbyOf: state.primary,
  });
  state.standby = next;
  await waitUntilCaughtUp(state.primary, next);
  if (state.synchronous) await setSynchronousStandbys(state.primary, '*');
  // Everything the read endpoint could have shown (on the primary) is now on the standby.
  await waitUntilCaughtUp(state.primary, next);
  state.readProxy.retarget(next.url());
  state.readProxy.cut();
  return { standby: next.name, pid: (await next.pid()) ?? null };
}

async function failOver(state: ClusterState): Promise<FailoverEvidence> {
  const promoted = state.standby;
  if (promoted === undefined) throw new Error('no standby to fail over to');
  const old = state.primary;
  const oldPid = (await old.pid()) ?? null;
  const began = Date.now();
  await old.stop('immediate');
  const killMs = Date.now() - began;
  state.retired.push(old);
  const promotedAtLsn = await admin(promoted.url(), async (client) => {
    const { rows } = await client.query<{ lsn: string | null }>(
      'SELECT pg_last_wal_replay_lsn()::text AS lsn',
    );
    return rows[0]?.lsn ?? null;
  });
  await promoted.promote();
  // It has no standby yet: with '*' still set it would wait for one on every commit.
  await setSynchronousStandbys(promoted, '');
  const promoteMs = Date.now() - began - killMs;
  state.primary = promoted;
  state.standby = undefined;
  state.failovers += 1;
  state.writeProxy.retarget(promoted.url());
  state.writeProxy.cut();
  // The read endpoint already names the promoted server (addStandby pointed it there).
  return {
    oldPrimary: old.name,
    oldPrimaryPid: oldPid,
    newPrimary: promoted.name,
    newPrimaryPid: (await promoted.pid()) ?? null,
    promotedAtLsn,
    killMs,
    promoteMs,
  };
}
