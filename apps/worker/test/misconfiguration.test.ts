import { once } from 'node:events';
import { createServer } from 'node:net';
import { freePort, launchProcess } from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_ENV, createHarness, type Harness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('worker_misconfiguration');
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('a misconfigured worker', () => {
  it('says in one line that METRICS_PORT is taken and what to do, and exits 1', async () => {
    const squatter = createServer();
    squatter.listen(0, '0.0.0.0');
    await once(squatter, 'listening');
    const port = (squatter.address() as { port: number }).port;
    try {
      const worker = await launchProcess({
        entry: 'apps/worker/src/main.ts',
        env: {
          ...FAST_ENV,
          DATABASE_URL: h.database.connectionString,
          REDIS_URL: h.redis.url,
          REDIS_PREFIX: h.redis.prefix,
          METRICS_PORT: String(port),
        },
      });
      expect(await worker.exited).toBe(1);
      const lines = worker.stderr().trim().split('\n');
      expect(lines.at(-1)).toBe(
        `METRICS_PORT=${port}: port ${port} is already in use (another worker on this host?). ` +
          'Set METRICS_PORT to a free port, or METRICS_PORT=0 to run without /healthz and /metrics.',
      );
      expect(worker.output()).not.toMatch(/\n\s+at /); // no stack trace
    } finally {
      squatter.close();
    }
  });

  it('says in one line that DATABASE_URL refuses connections, password masked, and exits 1', async () => {
    const closedPort = await freePort();
    const worker = await launchProcess({
      entry: 'apps/worker/src/main.ts',
      env: {
        ...FAST_ENV,
        DATABASE_URL: `postgres://postgres:s3cret@127.0.0.1:${closedPort}/test`,
        REDIS_URL: h.redis.url,
        REDIS_PREFIX: h.redis.prefix,
        METRICS_PORT: '0',
      },
    });
    expect(await worker.exited).toBe(1);
    expect(worker.output().trim()).toBe(
      `DATABASE_URL=postgres://postgres:***@127.0.0.1:${closedPort}/test: connection refused to ` +
        `127.0.0.1:${closedPort}. Start Postgres there, or set DATABASE_URL to the address of a ` +
        'running Postgres.',
    );
    expect(worker.output()).not.toContain('s3cret');
  });

  it('says once that REDIS_URL refuses connections and keeps retrying without flooding the log', async () => {
    const closedPort = await freePort();
    const worker = await launchProcess({
      entry: 'apps/worker/src/main.ts',
      env: {
        ...FAST_ENV,
        DATABASE_URL: h.database.connectionString,
        REDIS_URL: `redis://:s3cret@127.0.0.1:${closedPort}`,
        REDIS_PREFIX: h.redis.prefix,
        METRICS_PORT: '0',
      },
    });
    try {
      const expected =
        `REDIS_URL=redis://:***@127.0.0.1:${closedPort}: connection refused to ` +
        `127.0.0.1:${closedPort}. Start Redis there, or set REDIS_URL to the address of a ` +
        'running Redis. The worker keeps retrying and takes no tasks until then.';
      const messages = (): string[] =>
        worker
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => (JSON.parse(line) as { msg: string }).msg);
      const deadline = Date.now() + 30_000;
      while (!messages().includes(expected) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 200));
      // ioredis retries several times a second; give it time to fail many more times.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      expect(worker.child.exitCode).toBeNull();
      expect(messages()).toEqual([expected]);
      expect(worker.output()).not.toContain('s3cret');
    } finally {
      await worker.stop();
    }
  }, 60_000);
  it("refuses at start an ENQUEUE_GRACE_MS shorter than the gateways' create window, in one line", async () => {
    const worker = await launchProcess({
      entry: 'apps/worker/src/main.ts',
      env: {
        ...FAST_ENV,
        DATABASE_URL: h.database.connectionString,
        REDIS_URL: h.redis.url,
        REDIS_PREFIX: h.redis.prefix,
        METRICS_PORT: '0',
        MCP_VISIBILITY_TIMEOUT_MS: '5000',
        ENQUEUE_GRACE_MS: '5000',
      },
    });
    expect(await worker.exited).toBe(1);
    expect(worker.stderr().trim().split('\n')).toEqual([
      'invalid worker environment:',
      '  - ENQUEUE_GRACE_MS: 5000 ms is shorter than 2 × MCP_VISIBILITY_TIMEOUT_MS + 1000 = 11000 ms, so the sweeper could run a task whose client was told nothing will run; raise it or lower MCP_VISIBILITY_TIMEOUT_MS (give gateways and workers the same values)',
    ]);
  });
});
