import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { makePostgresDir, privatePostgresUnavailableReason } from './postgres-server.js';
import { freePort } from './processes.js';

// A PgBouncer a test or a chaos plan owns: its own ini, on a free port, in front of any Postgres
// (the shared server included: it only opens connections to it). Debian's `pgbouncer` package;
// it refuses to run as root, so it runs as the postgres user like the private servers.

const run = promisify(execFile);
export const PGBOUNCER_BIN = '/usr/sbin/pgbouncer';
const RUNUSER = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find((p) =>
  existsSync(p),
);

/** Why a PgBouncer cannot be started here, or null if it can. */
export function pgBouncerUnavailableReason(): string | null {
  if (!existsSync(PGBOUNCER_BIN)) {
    return `${PGBOUNCER_BIN} is missing (Debian: apt-get install -y pgbouncer; scripts/ci/install-engines.sh)`;
  }
  return privatePostgresUnavailableReason();
}

/**
 * For a test file that needs an engine this machine may lack: locally it is skipped with the
 * reason said; in CI (`CI` set) a missing engine is a failure, never a silent skip.
 */
export function skipUnlessEngine(what: string, reason: string | null): boolean {
  if (reason === null) return false;
  if (process.env.CI) throw new Error(`${what} is required in CI: ${reason}`);
  console.warn(`${what} tests skipped: ${reason}`);
  return true;
}

export type PgBouncerPoolMode = 'session' | 'transaction' | 'statement';

export interface PgBouncerOptions {
  /** The Postgres it pools: every database name a client asks for is passed through to it. */
  target: { host: string; port: number } | string;
  /** Default `transaction`. */
  poolMode?: PgBouncerPoolMode;
  /**
   * Startup parameters it drops instead of refusing the client (default `extra_float_digits`
   * only, so a `statement_timeout` sent at connect is refused, as by a stock install).
   */
  ignoreStartupParameters?: string[];
  /** Server connections per database/user pair; default 20. */
  defaultPoolSize?: number;
  /** More `[pgbouncer]` settings, over the defaults. */
  settings?: Record<string, string>;
}

export interface PgBouncer {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:PORT/DATABASE, through the pooler. */
  url(database: string): string;
  /** `url` with its host and port replaced by the pooler's (e.g. a test database's URL). */
  urlFor(url: string): string;
  /** The daemon's pid while it runs. */
  pid(): Promise<number | undefined>;
  start(): Promise<void>;
  /** SIGTERM: immediate shutdown, every client and server connection closed (a pooler crash). */
  stop(): Promise<void>;
  /** stop, then start again on the same port (a pooler restarted by its supervisor). */
  restart(): Promise<void>;
  /** Stops it and deletes its directory. */
  destroy(): Promise<void>;
}

function targetOf(target: PgBouncerOptions['target']): { host: string; port: number } {
  if (typeof target !== 'string') return target;
  const url = new URL(target);
  return { host: url.hostname, port: Number(url.port === '' ? '5432' : url.port) };
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A PgBouncer of its own on a free port (auth trust, every database passed to the target). */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const reason = pgBouncerUnavailableReason();
  if (reason !== null) throw new Error(`cannot start PgBouncer: ${reason}`);
  if (RUNUSER === undefined)
    throw new Error('runuser is missing (PgBouncer refuses to run as root)');
  const runuser = RUNUSER;
  const dir = await makePostgresDir('mcpt-pgbouncer-');
  const port = await freePort();
  const files = await writeConfig(dir, port, options);

  const pid = (): Promise<number | undefined> => readPid(files.pidFile);
  const start = (): Promise<void> => startDaemon(runuser, files);
  const stop = (): Promise<void> => stopDaemon(files.pidFile);

  try {
    await start();
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    port,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    urlFor(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    pid,
    start,
    stop,
    async restart() {
      await stop();
      await start();
    },
    async destroy() {
      await stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

interface PgBouncerFiles {
  iniFile: string;
  pidFile: string;
  logFile: string;
}

/** pgbouncer.ini (every database to the target) and a userlist for `postgres`, in `dir`. */
async function writeConfig(
  dir: string,
  port: number,
  options: PgBouncerOptions,
): Promise<PgBouncerFiles> {
  const target = targetOf(options.target);
  const pidFile = join(dir, 'pgbouncer.pid');
  const iniFile = join(dir, 'pgbouncer.ini');
  const settings: Record<string, string> = {
    listen_addr: '127.0.0.1',
    listen_port: String(port),
    unix_socket_dir: '',
    auth_type: 'trust',
    auth_file: join(dir, 'userlist.txt'),
    pool_mode: options.poolMode ?? 'transaction',
    max_client_conn: '2000',
    default_pool_size: String(options.defaultPoolSize ?? 20),
    ignore_startup_parameters: (options.ignoreStartupParameters ?? ['extra_float_digits']).join(
      ',',
    ),
    admin_users: 'postgres',
    logfile: join(dir, 'pgbouncer.log'),
    pidfile: pidFile,
    log_connections: '0',
    log_disconnections: '0',
    ...options.settings,
  };
  const ini = [
    '[databases]',
    `* = host=${target.host} port=${target.port}`,
    '[pgbouncer]',
    ...Object.entries(settings).map(([key, value]) => `${key} = ${value}`),
    '',
  ].join('\n');
  await writeFile(iniFile, ini, { mode: 0o644 });
  await writeFile(join(dir, 'userlist.txt'), '"postgres" ""\n', { mode: 0o644 });
  return { iniFile, pidFile, logFile: settings.logfile! };
}

/** The daemon's pid, when its pid file names a live process. */
async function readPid(pidFile: string): Promise<number | undefined> {
  const text = await readFile(pidFile, 'utf8').catch(() => undefined);
  const value = Number(text?.trim());
  return Number.isInteger(value) && value > 0 && alive(value) ? value : undefined;
}

async function startDaemon(runuser: string, files: PgBouncerFiles): Promise<void> {
  try {
    await run(runuser, ['-u', 'postgres', '--', PGBOUNCER_BIN, '-d', '-q', files.iniFile], {
      timeout: 30_000,
    });
  } catch (error) {
    const log = await readFile(files.logFile, 'utf8').catch(() => '');
    throw new Error(`pgbouncer did not start:\n${log.split('\n').slice(-10).join('\n')}`, {
      cause: error,
    });
  }
  // Daemonised: ready once the pid file names a live process and the port accepts.
  const deadline = Date.now() + 10_000;
  while ((await readPid(files.pidFile)) === undefined) {
    if (Date.now() > deadline) throw new Error('pgbouncer wrote no pid file within 10 s');
    await sleep(20);
  }
}

async function stopDaemon(pidFile: string): Promise<void> {
  const current = await readPid(pidFile);
  if (current === undefined) return;
  process.kill(current, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (alive(current)) {
    if (Date.now() > deadline) process.kill(current, 'SIGKILL');
    await sleep(20);
  }
}

/** The per-statement bound a transaction pooler cannot carry, set on the database itself. */
const POOLED_STATEMENT_TIMEOUT = '10s';

export interface TransactionPooler {
  bouncer: PgBouncer;
  /** DATABASE_URL for the apps: the database through the pooler. */
  pooledUrl: string;
  /** What every app process gets besides DATABASE_URL (DATABASE_DIRECT_URL, DATABASE_POOLER). */
  env: Record<string, string>;
}

/**
 * A PgBouncer in transaction mode in front of `databaseUrl`, with the settings that work there
 * (docs/deployment.md): the database's own statement_timeout, DATABASE_DIRECT_URL for LISTEN,
 * the sweeper's lock and migrations, and DATABASE_POOLER=transaction (`pnpm stack` and
 * `pnpm loadtest --topology pooler`).
 */
export async function startTransactionPooler(databaseUrl: string): Promise<TransactionPooler> {
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
