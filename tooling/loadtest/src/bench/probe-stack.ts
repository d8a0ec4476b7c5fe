import { createDb, migrateToLatest } from '@mcp-tasks/store';
import {
  createTestDatabase,
  createTestRedis,
  type TestDatabase,
  type TestRedis,
} from '@mcp-tasks/testing';
import { startBenchStack, type BenchStack } from './bench-stack.js';
import { deleteRedisPrefix } from './cleanup.js';

export interface ProbeStack {
  stack: BenchStack;
  database: TestDatabase;
  redisUrl: string;
  /** Stops the processes, drops the scratch database and deletes the Redis prefix. */
  close: () => Promise<void>;
}

/** A scratch database (migrated) and Redis prefix named after `label`, for a probe's stack. */
export async function createScratch(
  label: string,
): Promise<{ database: TestDatabase; redis: TestRedis }> {
  const database = await createTestDatabase(label);
  const redis = await createTestRedis(label);
  const db = createDb({ connectionString: database.connectionString });
  await migrateToLatest(db);
  await db.destroy();
  return { database, redis };
}

/**
 * For the ad-hoc probes next to `pnpm bench`: one gateway and `workers` workers from their builds
 * on a scratch database (migrated) and Redis prefix named after `label`.
 */
export async function startProbeStack(
  label: string,
  workers: number,
  options: {
    nodeArgs?: readonly string[];
    workerConcurrency?: number;
    /** More environment for every process (e.g. LEASE_MS, MCP_TOOL_MODULES). */
    env?: Record<string, string>;
    /** Runs on the migrated scratch database before the processes start. */
    beforeStart?: (databaseUrl: string) => Promise<void>;
    /** Another tree's built gateway and worker (a baseline checkout's), as startBenchStack's. */
    appsRoot?: string;
  } = {},
): Promise<ProbeStack> {
  const { database, redis } = await createScratch(label);
  await options.beforeStart?.(database.connectionString);
  const stack = await startBenchStack({
    databaseUrl: database.connectionString,
    redisUrl: redis.url,
    redisPrefix: redis.prefix,
    gateways: 1,
    workers,
    workerConcurrency: options.workerConcurrency ?? 32,
    nodeArgs: options.nodeArgs,
    env: options.env,
    appsRoot: options.appsRoot,
  });
  return {
    stack,
    database,
    redisUrl: redis.url,
    close: async () => {
      await stack.stop();
      await database.drop();
      await deleteRedisPrefix(redis.url, redis.prefix);
    },
  };
}
