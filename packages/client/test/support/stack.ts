import {
  createTestDatabase,
  createTestRedis,
  launchGateway,
  launchWorker,
  type LaunchedProcess,
  type TestDatabase,
  type TestRedis,
} from '@mcp-tasks/testing';
import { Redis } from 'ioredis';

export const TOKENS = { alice: 'tok_client_alice_000000000', bob: 'tok_client_bob_00000000000' };
/** An operator of the console (MCP_CONSOLE_TOKENS) for tenant acme, read-only: `mcp-tasks history`. */
export const CONSOLE_TOKEN = 'tok_console_acme_000000000';

export interface Gateway {
  url: string;
  process: LaunchedProcess;
}

/** Real gateways and workers on a fresh database and Redis prefix, as the worker e2e runs them. */
export interface Stack {
  database: TestDatabase;
  redis: TestRedis;
  gateways: Gateway[];
  workers: LaunchedProcess[];
  /** The first gateway's MCP endpoint. */
  mcpUrl: string;
  close(): Promise<void>;
}

export async function startStack(
  label: string,
  options: { gateways?: number; workers?: number; env?: Record<string, string> } = {},
): Promise<Stack> {
  const database = await createTestDatabase(label);
  const redis = await createTestRedis(label);
  const shared = {
    DATABASE_URL: database.connectionString,
    REDIS_URL: redis.url,
    REDIS_PREFIX: redis.prefix,
    LOG_LEVEL: 'warn',
    // A short create window (gateways) and so a sweeper grace floor of LEASE_MS (workers).
    MCP_VISIBILITY_TIMEOUT_MS: '500',
    // Extra environment for every process (e.g. OTEL_* to export traces).
    ...options.env,
  };
  const gateways: Gateway[] = [];
  const workers: LaunchedProcess[] = [];
  const stack: Stack = {
    database,
    redis,
    gateways,
    workers,
    mcpUrl: '',
    async close() {
      await Promise.allSettled(
        [...gateways, ...workers.map((process) => ({ process }))].map((p) => p.process.stop(5_000)),
      );
      const admin = new Redis(redis.url);
      const keys = await admin.keys(`${redis.prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      admin.disconnect();
      await database.drop();
    },
  };
  try {
    for (let i = 0; i < (options.gateways ?? 1); i += 1) {
      const { url, process } = await launchGateway({
        env: {
          ...shared,
          MCP_AUTH: 'tokens',
          MCP_TOKENS: `${TOKENS.alice}:acme:alice,${TOKENS.bob}:acme:bob`,
          MCP_CONSOLE_TOKENS: `${CONSOLE_TOKEN}:acme`,
          REQUEST_STATE_SECRET: 'client-tests-request-state-secret-0123456789',
          // The first replica migrates; the others start once it is ready.
          ...(i === 0 ? { MCP_MIGRATE_ON_START: 'true' } : {}),
          MCP_SHUTDOWN_DELAY_MS: '0',
        },
        readyPath: '/readyz',
        readyTimeoutMs: 60_000,
      });
      gateways.push({ url, process });
    }
    stack.mcpUrl = `${gateways[0]!.url}/mcp`;
    for (let i = 0; i < (options.workers ?? 1); i += 1) {
      const { process } = await launchWorker({
        env: { ...shared, LEASE_MS: '2000', SWEEP_INTERVAL_MS: '300', REPORT_STEP_MS: '300' },
        id: `client-test-worker-${i + 1}`,
        readyTimeoutMs: 60_000,
      });
      workers.push(process);
    }
  } catch (error) {
    await stack.close();
    throw error;
  }
  return stack;
}
