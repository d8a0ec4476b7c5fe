import { createDb, migrateToLatest, type Db } from '@mcp-tasks/store';
import {
  createTestDatabase,
  createTestRedis,
  launchGateway,
  type LaunchedProcess,
  type TestDatabase,
  type TestRedis,
} from '@mcp-tasks/testing';
import { MCP_TOKENS } from './rpc.js';

export interface GatewayProcess {
  process: LaunchedProcess;
  url: string;
}

/**
 * A migrated database and a Redis prefix of this file's own, and real gateway processes (from
 * source) on them: the setup of every multi-process gateway test.
 */
export interface GatewayInfra {
  database: TestDatabase;
  redis: TestRedis;
  db: Db;
  /** What every gateway of this file reads: its database and prefix, the test tokens. */
  env: Record<string, string>;
  /** Starts one gateway on a free port with `env` plus `extra`; resolves once it is healthy. */
  startGateway(extra?: Record<string, string>): Promise<GatewayProcess>;
  /** Stops every gateway started, deletes the prefix's keys and drops the database. */
  close(): Promise<void>;
}

export async function createGatewayInfra(
  label: string,
  env: Record<string, string> = {},
): Promise<GatewayInfra> {
  const database = await createTestDatabase(label);
  const redis = await createTestRedis(label);
  const db = createDb({ connectionString: database.connectionString });
  await migrateToLatest(db);
  const started: GatewayProcess[] = [];
  const shared = {
    DATABASE_URL: database.connectionString,
    REDIS_URL: redis.url,
    REDIS_PREFIX: redis.prefix,
    MCP_AUTH: 'tokens',
    MCP_TOKENS,
    REQUEST_STATE_SECRET: `${label}-request-state-secret-0123456789abcdef`,
    LOG_LEVEL: 'warn',
    ...env,
  };
  return {
    database,
    redis,
    db,
    env: shared,
    async startGateway(extra = {}) {
      const { process, url } = await launchGateway({ env: { ...shared, ...extra } });
      const gateway = { process, url };
      started.push(gateway);
      return gateway;
    },
    async close() {
      await Promise.allSettled(started.map((gateway) => gateway.process.stop()));
      await redis.deleteKeys();
      await db.destroy();
      await database.drop();
    },
  };
}
