import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  makePostgresDir,
  privatePostgresUnavailableReason,
  runAsPostgres,
  startPostgresServer,
  type PostgresServer,
} from './postgres-server.js';
import { freePort } from './processes.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

/**
 * Why a real streaming replica cannot be started here, or null if it can. It runs a private
 * primary (initdb in a temp dir) rather than replicating the shared server on :5432, whose pg_hba
 * has no replication entry: tests must not edit system configuration, and a private pair needs none.
 */
export const replicaUnavailableReason = privatePostgresUnavailableReason;

export interface ReplicaPair {
  primaryUrl: string;
  replicaUrl: string;
  stop(): Promise<void>;
}

/** A throwaway primary on a free port plus a hot standby streaming from it (pg_basebackup -R). */
export async function startReplicaPair(): Promise<ReplicaPair> {
  const dir = await makePostgresDir('mcpt-replica-');
  const primaryDir = join(dir, 'primary');
  const replicaDir = join(dir, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const started: string[] = [];
  const stop = async (): Promise<void> => {
    for (const dataDir of started.reverse()) {
      await runAsPostgres('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(
        () => undefined,
      );
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await runAsPostgres('initdb', ['-D', primaryDir, '-U', 'postgres', '-A', 'trust', '--no-sync']);
    const common = `-k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    await runAsPostgres('pg_ctl', [
      '-D',
      primaryDir,
      '-l',
      join(dir, 'primary.log'),
      '-w',
      '-o',
      `-p ${primaryPort} ${common} -c wal_level=replica -c max_wal_senders=5`,
      'start',
    ]);
    started.push(primaryDir);
    await runAsPostgres('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      replicaDir,
      '-R',
      '-X',
      'stream',
    ]);
    await runAsPostgres('pg_ctl', [
      '-D',
      replicaDir,
      '-l',
      join(dir, 'replica.log'),
      '-w',
      '-o',
      `-p ${replicaPort} ${common} -c hot_standby=on`,
      'start',
    ]);
    started.push(replicaDir);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    primaryUrl: `postgres://postgres@127.0.0.1:${primaryPort}/postgres`,
    replicaUrl: `postgres://postgres@127.0.0.1:${replicaPort}/postgres`,
    stop,
  };
}

export interface ReplicaSet {
  primary: PostgresServer;
  replicas: PostgresServer[];
  /** A round-robin TCP proxy over the replicas: each new connection goes to the next one. */
  readerEndpoint: TcpProxy;
  /** `database` on the primary. */
  primaryUrl(database?: string): string;
  /** `database` through the reader endpoint. */
  readerUrl(database?: string): string;
  /** Each replica's own URL for `database`. */
  replicaUrls(database?: string): string[];
  stop(): Promise<void>;
}

/**
 * A private primary and several hot standbys streaming from it, each with its own settings (e.g.
 * `recovery_min_apply_delay` for one that lags), behind one reader endpoint that spreads
 * connections over them as a managed reader, HAProxy or pgpool would.
 */
export async function startReplicaSet(options: {
  replicas: Record<string, string>[];
}): Promise<ReplicaSet> {
  const dir = await makePostgresDir('mcpt-replicas-');
  const servers: PostgresServer[] = [];
  let readerEndpoint: TcpProxy | undefined;
  const stop = async (): Promise<void> => {
    await readerEndpoint?.close();
    for (const server of [...servers].reverse()) await server.destroy();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const primary = await startPostgresServer({ dir, name: 'primary' });
    servers.push(primary);
    for (const [index, settings] of options.replicas.entries()) {
      servers.push(
        await startPostgresServer({
          dir,
          name: `replica${index + 1}`,
          standbyOf: primary,
          settings,
        }),
      );
    }
    const replicas = servers.slice(1);
    readerEndpoint = await startTcpProxy({
      target: replicas.map((replica) => ({ host: '127.0.0.1', port: replica.port })),
    });
    const endpoint = readerEndpoint;
    return {
      primary,
      replicas,
      readerEndpoint: endpoint,
      primaryUrl: (database = 'postgres') => primary.url(database),
      readerUrl: (database = 'postgres') => endpoint.urlFor(primary.url(database)),
      replicaUrls: (database = 'postgres') => replicas.map((replica) => replica.url(database)),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
