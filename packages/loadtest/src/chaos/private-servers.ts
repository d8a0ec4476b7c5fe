import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort } from '@mcp-tasks/testing';
import { Redis } from 'ioredis';
import type { RestartableServer } from './plan.js';

const run = promisify(execFile);

/**
 * Servers the harness owns (its own port and data dir), so chaos can restart them: the shared
 * Postgres and Redis of the machine are never touched.
 */
export interface PrivateServer extends RestartableServer {
  url: string;
  stop(): Promise<void>;
}

/** A redis-server with an fsync-always AOF: a SIGKILL loses nothing it acknowledged. */
export async function startPrivateRedis(): Promise<PrivateServer> {
  const dir = await mkdtemp(join(tmpdir(), 'loadtest-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const url = `redis://127.0.0.1:${port}`;
  const start = async () => {
    child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
      ],
      { stdio: 'ignore' },
    );
    for (let tries = 0; ; tries += 1) {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
      probe.on('error', () => undefined); // refused while it starts: retried below
      try {
        await probe.connect();
        if ((await probe.ping()) === 'PONG') return;
      } catch {
        if (tries > 100) throw new Error(`private redis-server on ${port} did not start`);
        await sleep(100);
      } finally {
        probe.disconnect();
      }
    }
  };
  const kill = async () => {
    if (child === undefined || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    name: 'redis',
    url,
    pid: () => Promise.resolve(child?.exitCode === null ? child.pid : undefined),
    async restart() {
      await kill();
      await start();
    },
    async stop() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const PG_BIN = '/usr/lib/postgresql/15/bin';
const RUNUSER = ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find((p) =>
  existsSync(p),
);

async function asPostgres(binary: string, args: string[]): Promise<void> {
  if (RUNUSER === undefined) throw new Error('runuser is missing (postgres runs as its own user)');
  try {
    await run(RUNUSER, ['-u', 'postgres', '--', join(PG_BIN, binary), ...args], {
      timeout: 120_000,
    });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${binary} ${args.join(' ')} failed:\n${stdout}\n${stderr}`, { cause: error });
  }
}

const idOf = (flag: '-u' | '-g') =>
  Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());

/**
 * A Postgres cluster of its own (initdb into a temp dir, as the postgres user, on a free port),
 * as the store's replica test starts one. A restart is an immediate stop (a crash: recovery from
 * the WAL on start), so clients see their connections die.
 */
export async function startPrivatePostgres(): Promise<PrivateServer> {
  const dir = await mkdtemp(join(tmpdir(), 'loadtest-pg-'));
  await chown(dir, idOf('-u'), idOf('-g'));
  const dataDir = join(dir, 'data');
  const port = await freePort();
  await asPostgres('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync']);
  const start = () =>
    asPostgres('pg_ctl', [
      '-D',
      dataDir,
      '-l',
      join(dir, 'server.log'),
      '-w',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`,
      'start',
    ]);
  const stopNow = () => asPostgres('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
  await start();
  return {
    name: 'postgres',
    url: `postgres://postgres@127.0.0.1:${port}/loadtest`,
    // The postmaster's pid: the first line of postmaster.pid while it runs.
    pid: async () => {
      const text = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => undefined);
      const pid = Number(text?.split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    },
    async restart() {
      await stopNow();
      await start();
    },
    async stop() {
      await stopNow().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
