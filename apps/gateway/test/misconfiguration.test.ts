import { once } from 'node:events';
import { createServer } from 'node:net';
import {
  createTestDatabase,
  createTestRedis,
  freePort,
  launchProcess,
  type TestDatabase,
  type TestRedis,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Real gateway processes started with one thing misconfigured: each says so in one line. */
let redis: TestRedis;
let database: TestDatabase;

beforeAll(async () => {
  redis = await createTestRedis('gw_misconf');
  database = await createTestDatabase('gw_misconf');
}, 60_000);

afterAll(async () => {
  await redis?.deleteKeys();
  await database?.drop();
});

function gatewayEnv(overrides: Record<string, string>): Record<string, string> {
  return {
    REDIS_URL: redis.url,
    REDIS_PREFIX: redis.prefix,
    MCP_AUTH: 'none',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ...overrides,
  };
}

describe('a misconfigured gateway', () => {
  it('says in one line that DATABASE_URL refuses connections, password masked, and exits 1', async () => {
    const closedPort = await freePort();
    const gateway = await launchProcess({
      entry: 'apps/gateway/src/main.ts',
      env: gatewayEnv({
        DATABASE_URL: `postgres://postgres:s3cret@127.0.0.1:${closedPort}/test`,
        PORT: String(await freePort()),
      }),
    });
    expect(await gateway.exited).toBe(1);
    const lines = gateway.stderr().trim().split('\n');
    expect(lines.at(-1)).toBe(
      `gateway: DATABASE_URL=postgres://postgres:***@127.0.0.1:${closedPort}/test: connection ` +
        `refused to 127.0.0.1:${closedPort}. Start Postgres there, or set DATABASE_URL to the ` +
        'address of a running Postgres.',
    );
    expect(gateway.output()).not.toContain('s3cret');
    expect(gateway.output()).not.toMatch(/\n\s+at /);
  });

  it('says in one line that REDIS_URL refuses connections, password masked, and exits 1', async () => {
    const closedPort = await freePort();
    const gateway = await launchProcess({
      entry: 'apps/gateway/src/main.ts',
      env: gatewayEnv({
        DATABASE_URL: database.connectionString,
        MCP_MIGRATE_ON_START: 'true',
        REDIS_URL: `redis://:s3cret@127.0.0.1:${closedPort}`,
        PORT: String(await freePort()),
      }),
    });
    expect(await gateway.exited).toBe(1);
    const lines = gateway.stderr().trim().split('\n');
    expect(lines.at(-1)).toBe(
      `gateway: REDIS_URL=redis://:***@127.0.0.1:${closedPort}: connection refused to ` +
        `127.0.0.1:${closedPort}. Start Redis there, or set REDIS_URL to the address of a ` +
        'running Redis.',
    );
    expect(gateway.output()).not.toContain('s3cret');
    expect(gateway.output()).not.toMatch(/\n\s+at /);
  });

  it('says in one line that PORT is taken and what to do, and exits 1', async () => {
    const squatter = createServer();
    squatter.listen(0, '127.0.0.1');
    await once(squatter, 'listening');
    const port = (squatter.address() as { port: number }).port;
    try {
      const gateway = await launchProcess({
        entry: 'apps/gateway/src/main.ts',
        env: gatewayEnv({
          DATABASE_URL: database.connectionString,
          MCP_MIGRATE_ON_START: 'true',
          PORT: String(port),
        }),
      });
      expect(await gateway.exited).toBe(1);
      const lines = gateway.stderr().trim().split('\n');
      expect(lines.at(-1)).toBe(
        `gateway: PORT=${port}: port ${port} on 127.0.0.1 is already in use (another gateway or ` +
          'program on this host?). Stop it, or set PORT to a free port.',
      );
      expect(gateway.output()).not.toMatch(/\n\s+at /);
    } finally {
      squatter.close();
    }
  });
  it('refuses at start an ENQUEUE_GRACE_MS shorter than its create window, in one line', async () => {
    const gateway = await launchProcess({
      entry: 'apps/gateway/src/main.ts',
      env: gatewayEnv({
        DATABASE_URL: database.connectionString,
        ENQUEUE_GRACE_MS: '5000',
        PORT: String(await freePort()),
      }),
    });
    expect(await gateway.exited).toBe(1);
    expect(gateway.stderr().trim().split('\n')).toEqual([
      'gateway: invalid configuration:',
      '  - ENQUEUE_GRACE_MS: 5000 ms is shorter than 2 × MCP_VISIBILITY_TIMEOUT_MS + 1000 = 11000 ms, so the sweeper could run a task whose client was told nothing will run; raise it or lower MCP_VISIBILITY_TIMEOUT_MS (give gateways and workers the same values)',
    ]);
  });
  it('refuses at start an OTLP protocol it does not ship, in one line', async () => {
    const gateway = await launchProcess({
      entry: 'apps/gateway/src/main.ts',
      env: gatewayEnv({
        DATABASE_URL: database.connectionString,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        PORT: String(await freePort()),
      }),
    });
    expect(await gateway.exited).toBe(1);
    expect(gateway.stderr().trim().split('\n')).toEqual([
      'gateway: invalid configuration:',
      '  - OTEL_EXPORTER_OTLP_PROTOCOL=grpc: use http/protobuf (the default) or http/json; grpc is not shipped',
    ]);
  });
});
