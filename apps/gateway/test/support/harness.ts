import { createTaskQueue, type TaskQueue } from '@mcp-tasks/queue';
import {
  createDb,
  createTaskChangeListener,
  createTaskService,
  migrateToLatest,
  type Db,
  type WakeUpQueue,
  type TaskService,
} from '@mcp-tasks/store';
import {
  createTestDatabase,
  createTestRedis,
  type TestDatabase,
  type TestRedis,
} from '@mcp-tasks/testing';
import { TOOL_PACKS, createToolCatalogue, type ToolDefinition } from '@mcp-tasks/tools';
import { pino, type Logger } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { createGatewayApp, type GatewayAppConfig, type GatewayAppOptions } from '../../src/app.js';
import { createAuthenticator } from '../../src/auth/index.js';
import { parseTokenList } from '../../src/env.js';
import { createMetrics, type GatewayMetrics } from '../../src/metrics.js';
import { taskChangeFeedFrom, type TaskChangeFeed } from '../../src/task-feed.js';
import { MCP_TOKENS } from './rpc.js';

export const TEST_CONFIG: GatewayAppConfig = {
  requestStateSecret: 'test-request-state-secret-0123456789abcdef',
  requestStateTtlMs: 60_000,
  maxBodyBytes: 64 * 1024,
  pollRateLimit: false,
  requestTimeoutMs: 10_000,
  allowedOrigins: undefined,
  taskTtlMs: 3_600_000,
  taskPollIntervalMs: 1000,
  sseKeepAliveMs: 15_000,
};

/** Real Postgres (own database, migrated) and real Redis (own prefix) for one test file. */
export interface Infrastructure {
  database: TestDatabase;
  redis: TestRedis;
  db: Db;
  queue: TaskQueue;
  changes: TaskChangeFeed;
  /** What a reconnect of the LISTEN connection triggers. */
  resync(): void;
  close(): Promise<void>;
}

export async function startInfrastructure(label: string): Promise<Infrastructure> {
  const database = await createTestDatabase(label);
  const redis = await createTestRedis(label);
  const db = createDb({ connectionString: database.connectionString });
  await migrateToLatest(db);
  const queue = createTaskQueue({ redis: { url: redis.url }, prefix: redis.prefix });
  const listener = await createTaskChangeListener({ connectionString: database.connectionString });
  const { feed: changes, resync } = taskChangeFeedFrom(listener);
  return {
    database,
    redis,
    db,
    queue,
    changes,
    resync,
    async close() {
      await listener.close();
      await queue.close();
      await redis.deleteKeys();
      await db.destroy();
      await database.drop();
    },
  };
}

export interface GatewayUnderTest {
  app: ReturnType<typeof createGatewayApp>;
  metrics: GatewayMetrics;
  shutdown: AbortController;
}

export interface GatewayOverrides {
  config?: Partial<GatewayAppConfig>;
  wakeUpQueue?: WakeUpQueue;
  taskService?: TaskService;
  queue?: { ping(): Promise<void> };
  logger?: Logger;
  workerLiveness?: GatewayAppOptions['workerLiveness'];
  /** Tools beside the built-in packs (test fixtures). */
  tools?: readonly ToolDefinition[];
  /** Instead of the test tokens (MCP_TOKENS of rpc.ts). */
  auth?: GatewayAppOptions['auth'];
  resourceMetadata?: GatewayAppOptions['resourceMetadata'];
  console?: GatewayAppOptions['console'];
}

export function buildGateway(
  infra: Pick<Infrastructure, 'db' | 'queue' | 'changes'>,
  overrides: GatewayOverrides = {},
): GatewayUnderTest {
  const metrics = createMetrics();
  const shutdown = new AbortController();
  const app = createGatewayApp({
    taskService:
      overrides.taskService ??
      createTaskService({ db: infra.db, wakeUpQueue: overrides.wakeUpQueue ?? infra.queue }),
    queue: overrides.queue ?? infra.queue,
    catalogue: createToolCatalogue({
      packs: [...TOOL_PACKS],
      modules:
        overrides.tools === undefined ? [] : [{ specifier: 'test', tools: [...overrides.tools] }],
    }),
    auth:
      overrides.auth ??
      createAuthenticator({ mode: 'tokens', tokens: parseTokenList(MCP_TOKENS).tokens }),
    changes: infra.changes,
    logger: overrides.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    config: { ...TEST_CONFIG, ...overrides.config },
    metrics,
    shutdownSignal: shutdown.signal,
    workerLiveness: overrides.workerLiveness,
    resourceMetadata: overrides.resourceMetadata,
    console: overrides.console,
  });
  return { app, metrics, shutdown };
}

/**
 * The setup of a test file that drives one in-process gateway: its own infrastructure (`label`
 * names the database and Redis prefix), a gateway built on it before the file's tests, and both
 * torn down after them. The two objects are filled in by `beforeAll`, so destructure them at the
 * top of the file and read them inside tests and hooks only.
 */
export function useGatewayUnderTest(
  label: string,
  overrides: (infra: Infrastructure) => GatewayOverrides = () => ({}),
): { infra: Infrastructure; gw: GatewayUnderTest } {
  const infra = {} as Infrastructure;
  const gw = {} as GatewayUnderTest;
  let started: Infrastructure | undefined;
  beforeAll(async () => {
    started = await startInfrastructure(label);
    Object.assign(infra, started);
    Object.assign(gw, buildGateway(infra, overrides(infra)));
  });
  afterAll(async () => {
    await started?.close();
  });
  return { infra, gw };
}
