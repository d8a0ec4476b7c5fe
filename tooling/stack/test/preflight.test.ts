import { spawnSync } from 'node:child_process';
import {
  freePort,
  nodeArguments,
  postgresBaseUrl,
  redisBaseUrl,
  repoRoot,
  uniqueSuffix,
} from '@mcp-tasks/testing';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ensurePostgres } from '../src/index.js';

/** `pnpm stack ARGS` as a user runs it (the root script), with this environment on top of ours. */
function runStackCli(env: Record<string, string>, args: string[] = ['--port', '0']) {
  return spawnSync(process.execPath, [...nodeArguments('tooling/stack/src/cli.ts'), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('pnpm stack when a service does not answer', () => {
  it('names the Postgres URL that failed and how to start one, in one line, no stack trace', async () => {
    const port = await freePort();
    const result = runStackCli({
      DATABASE_URL: `postgres://postgres:hunter2@127.0.0.1:${port}/mcp_tasks`,
      REDIS_URL: await redisBaseUrl(),
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `pnpm stack: Postgres does not answer at postgres://postgres:***@127.0.0.1:${port}/mcp_tasks (connect ECONNREFUSED 127.0.0.1:${port}). ` +
        'Start one (Debian: pg_ctlcluster --skip-systemctl-redirect 15 main start; Docker: docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15) or point DATABASE_URL at yours.\n',
    );
  });

  it('names the Redis URL that failed and how to start one', async () => {
    const port = await freePort();
    const result = runStackCli({
      DATABASE_URL: await postgresBaseUrl(),
      REDIS_URL: `redis://127.0.0.1:${port}`,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.split('\n')).toEqual([
      `pnpm stack: Redis does not answer at redis://127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port}). Start one (Debian: redis-server --daemonize yes --port 6379; Docker: docker run -d -p 6379:6379 redis:7) or point REDIS_URL at yours.`,
      '',
    ]);
  });

  it('rejects a bad count with the usage', () => {
    const result = runStackCli({}, ['--gateways', 'three']);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(
      /^pnpm stack: --gateways must be a whole number, got "three"\nusage: pnpm stack/,
    );
  });

  it('rejects --internal-ports other than fixed or free with the usage', () => {
    const result = runStackCli({}, ['--internal-ports', 'random']);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(
      /^pnpm stack: --internal-ports must be fixed or free, got "random"\nusage: pnpm stack/,
    );
  });
});

describe('ensurePostgres', () => {
  it('creates the database when the server has none, once', async () => {
    const url = new URL(await postgresBaseUrl());
    const name = `mcpt_stack_create_${uniqueSuffix()}`;
    url.pathname = `/${name}`;
    try {
      expect(await ensurePostgres(url.toString())).toEqual({ created: true });
      expect(await ensurePostgres(url.toString())).toEqual({ created: false });
    } finally {
      const admin = new pg.Client({ connectionString: await postgresBaseUrl() });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });
});
