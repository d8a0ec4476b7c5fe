import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, makePostgresDir, startPostgresServer } from '@mcp-tasks/testing';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { RestartableServer } from './plan.js';

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

/**
 * A Postgres cluster of its own (`startPostgresServer` of @mcp-tasks/testing: initdb into a temp
 * dir, run by pg_ctl as the postgres user on a free port). A restart is an immediate stop (a
 * crash: recovery from the WAL on start), so clients see their connections die.
 */
export async function startPrivatePostgres(
  settings: Record<string, string> = {},
): Promise<PrivateServer> {
  const dir = await makePostgresDir('loadtest-pg-');
  const server = await startPostgresServer({ dir, name: 'loadtest-pg', settings });
  // The run's database exists before anything opens it (the ledger does, before the stack).
  const admin = new pg.Client({ connectionString: server.url() });
  await admin.connect();
  try {
    await admin.query('CREATE DATABASE loadtest');
  } finally {
    await admin.end();
  }
  return {
    name: 'postgres',
    url: server.url('loadtest'),
    pid: () => server.pid(),
    async restart() {
      await server.stop('immediate');
      await server.start();
    },
    async stop() {
      await server.destroy();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
