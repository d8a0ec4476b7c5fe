import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

// Postgres servers a test or a chaos plan owns (initdb into a temp dir, run by pg_ctl as the
// postgres user on a free port), so they can be stopped, killed, promoted and started again:
// the shared server on :5432 is never touched. Debian's postgresql-15 binaries, run as root.

const run = promisify(execFile);
export const PG_BIN = '/usr/lib/postgresql/15/bin';
const RUNUSER = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find((p) =>
  existsSync(p),
);

/** Why a private Postgres cannot be started here, or null if it can. */
export function privatePostgresUnavailableReason(): string | null {
  for (const binary of ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres']) {
    if (!existsSync(join(PG_BIN, binary))) return `${PG_BIN}/${binary} is missing`;
  }
  if (RUNUSER === undefined)
    return 'runuser is missing (needed to run postgres as its own OS user)';
  if (process.getuid?.() !== 0)
    return 'not running as root, so cannot run postgres as the postgres user';
  return null;
}

/** Runs one of the server's binaries as the postgres user; the error carries its output. */
export async function runAsPostgres(binary: string, args: string[]): Promise<string> {
  if (RUNUSER === undefined) throw new Error('runuser is missing (postgres runs as its own user)');
  try {
    const { stdout } = await run(RUNUSER, ['-u', 'postgres', '--', join(PG_BIN, binary), ...args], {
      timeout: 120_000,
    });
    return stdout;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${binary} ${args.join(' ')} failed:\n${stdout}\n${stderr}`, { cause: error });
  }
}

/** A temp dir the postgres user owns, for data dirs, sockets and logs. */
export async function makePostgresDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const id = (flag: '-u' | '-g') =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  await chown(dir, id('-u'), id('-g'));
  return dir;
}

/** How pg_ctl stops a server: `fast` ends sessions with 57P01; `immediate` is a crash. */
export type PostgresStopMode = 'smart' | 'fast' | 'immediate';

export interface PostgresServer {
  readonly name: string;
  readonly port: number;
  readonly dataDir: string;
  /** postgres://postgres@127.0.0.1:PORT/DATABASE */
  url(database?: string): string;
  /** The postmaster's pid while it runs (postmaster.pid's first line). */
  pid(): Promise<number | undefined>;
  start(): Promise<void>;
  stop(mode?: PostgresStopMode): Promise<void>;
  /** `pg_ctl promote` a standby, waiting until it accepts writes. */
  promote(): Promise<void>;
  /** Stops it (immediate) and deletes its data dir. */
  destroy(): Promise<void>;
}

export interface PostgresServerOptions {
  /** A dir of makePostgresDir; the data dir, socket and log go in it. */
  dir: string;
  name: string;
  /** `-c name=value` settings on the command line, over the defaults. */
  settings?: Record<string, string>;
  /** Copy this running server (pg_basebackup -R: a streaming hot standby) instead of initdb. */
  standbyOf?: PostgresServer;
}

/**
 * A server of its own: initdb, or a streaming standby of another (pg_basebackup -R -X stream),
 * started on a free port. fsync is off: these are throwaway clusters, and a crash (`immediate`)
 * still exercises recovery from the WAL, which fsync=off does not skip.
 */
export async function startPostgresServer(options: PostgresServerOptions): Promise<PostgresServer> {
  const { dir, name } = options;
  const dataDir = join(dir, name);
  const port = await freePort();
  if (options.standbyOf === undefined) {
    await runAsPostgres('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync']);
  } else {
    await runAsPostgres('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(options.standbyOf.port),
      '-U',
      'postgres',
      '-D',
      dataDir,
      '-R',
      '-X',
      'stream',
      // Without it the copy waits for the next spread checkpoint (up to checkpoint_timeout).
      '--checkpoint=fast',
    ]);
  }
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    max_connections: '200',
    fsync: 'off',
    wal_level: 'replica',
    max_wal_senders: '10',
    hot_standby: 'on',
    // The standby's walreceiver names itself by cluster_name: synchronous_standby_names uses it.
    cluster_name: name,
    ...options.settings,
  };
  const serverOptions = [
    `-p ${port}`,
    `-k ${dir}`,
    ...Object.entries(settings).map(([key, value]) => `-c ${key}=${value}`),
  ].join(' ');
  const server: PostgresServer = {
    name,
    port,
    dataDir,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async pid() {
      const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => undefined);
      const pid = Number(text?.split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    },
    async start() {
      await runAsPostgres('pg_ctl', [
        '-D',
        dataDir,
        '-l',
        join(dir, `${name}.log`),
        '-w',
        '-o',
        serverOptions,
        'start',
      ]);
    },
    async stop(mode = 'fast') {
      await runAsPostgres('pg_ctl', ['-D', dataDir, '-m', mode, '-w', 'stop']);
    },
    async promote() {
      await runAsPostgres('pg_ctl', ['-D', dataDir, '-w', 'promote']);
    },
    async destroy() {
      await server.stop('immediate').catch(() => undefined);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
