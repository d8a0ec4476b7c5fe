import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

const run = promisify(execFile);
const PG_BIN = '/usr/lib/postgresql/15/bin';
const RUNUSER = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find((p) =>
  existsSync(p),
);

/**
 * Why a real streaming replica cannot be started here, or null if it can. It runs a private
 * primary (initdb in a temp dir) rather than replicating the shared server on :5432, whose pg_hba
 * has no replication entry: tests must not edit system configuration, and a private pair needs none.
 */
export function replicaUnavailableReason(): string | null {
  for (const binary of ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres']) {
    if (!existsSync(join(PG_BIN, binary))) return `${PG_BIN}/${binary} is missing`;
  }
  if (RUNUSER === undefined)
    return 'runuser is missing (needed to run postgres as its own OS user)';
  if (process.getuid?.() !== 0)
    return 'not running as root, so cannot run postgres as the postgres user';
  return null;
}

export interface ReplicaPair {
  primaryUrl: string;
  replicaUrl: string;
  stop(): Promise<void>;
}

async function asPostgres(binary: string, args: string[]): Promise<void> {
  try {
    await run(RUNUSER!, ['-u', 'postgres', '--', join(PG_BIN, binary), ...args], {
      timeout: 60_000,
    });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${binary} ${args.join(' ')} failed:\n${stdout}\n${stderr}`, { cause: error });
  }
}

/** A throwaway primary on a free port plus a hot standby streaming from it (pg_basebackup -R). */
export async function startReplicaPair(): Promise<ReplicaPair> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpt-replica-'));
  await chown(dir, idOf('postgres', '-u'), idOf('postgres', '-g'));
  const primaryDir = join(dir, 'primary');
  const replicaDir = join(dir, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const started: string[] = [];
  const stop = async (): Promise<void> => {
    for (const dataDir of started.reverse()) {
      await asPostgres('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(
        () => undefined,
      );
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await asPostgres('initdb', ['-D', primaryDir, '-U', 'postgres', '-A', 'trust', '--no-sync']);
    const common = `-k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    await asPostgres('pg_ctl', [
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
    await asPostgres('pg_basebackup', [
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
    await asPostgres('pg_ctl', [
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

/** Numeric uid or gid of an OS user (`id -u` / `id -g`). */
function idOf(user: string, flag: '-u' | '-g'): number {
  return Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());
}
