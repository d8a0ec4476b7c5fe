import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';

/**
 * Where the real services come from, in order: DATABASE_URL / REDIS_URL; else containers started
 * with testcontainers when a Docker engine answers; else a clear error saying how to provide them.
 */
let postgresBase: Promise<string> | undefined;
let redisBase: Promise<string> | undefined;

const HOW_TO_PROVIDE =
  'Set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test) and REDIS_URL ' +
  '(e.g. redis://127.0.0.1:6379), or run a Docker engine so testcontainers can start them.';

async function startWithTestcontainers<T>(what: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    throw new Error(
      `No ${what} for the tests: the env var is unset and testcontainers could not start one ` +
        `(${error instanceof Error ? error.message : String(error)}). ${HOW_TO_PROVIDE}`,
    );
  }
}

export function postgresBaseUrl(): Promise<string> {
  postgresBase ??= process.env.DATABASE_URL
    ? Promise.resolve(process.env.DATABASE_URL)
    : startWithTestcontainers('Postgres', async () => {
        const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
        const container = await new PostgreSqlContainer('postgres:15-alpine').start();
        return container.getConnectionUri();
      });
  return postgresBase;
}

export function redisBaseUrl(): Promise<string> {
  redisBase ??= process.env.REDIS_URL
    ? Promise.resolve(process.env.REDIS_URL)
    : startWithTestcontainers('Redis', async () => {
        const { RedisContainer } = await import('@testcontainers/redis');
        const container = await new RedisContainer('redis:7-alpine').start();
        return container.getConnectionUrl();
      });
  return redisBase;
}

export function uniqueSuffix(): string {
  return `${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export interface TestDatabase {
  connectionString: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, empty database of its own for one test file, so files can run in parallel. */
export async function createTestDatabase(label = 'test'): Promise<TestDatabase> {
  const base = await postgresBaseUrl();
  const name = `mcpt_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${uniqueSuffix()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    connectionString: url.toString(),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

export interface TestRedis {
  url: string;
  /** A key prefix no other test file uses (BullMQ `prefix`). */
  prefix: string;
  /** How many keys exist under the prefix (SCAN, so it never blocks the shared server). */
  countKeys(): Promise<number>;
  /** Deletes every key under this file's prefix (SCAN + DEL; never FLUSHALL on the shared server). */
  deleteKeys(): Promise<void>;
}

/** Runs `visit` on each SCAN page of keys under `prefix:`. */
async function scanPrefix(
  url: string,
  prefix: string,
  visit: (redis: Redis, keys: string[]) => void | Promise<void>,
): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await visit(redis, keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export async function createTestRedis(label = 'test'): Promise<TestRedis> {
  const url = await redisBaseUrl();
  const prefix = `mcpt-${label}-${uniqueSuffix()}`;
  return {
    url,
    prefix,
    async countKeys() {
      let count = 0;
      await scanPrefix(url, prefix, (_redis, keys) => {
        count += keys.length;
      });
      return count;
    },
    async deleteKeys() {
      await scanPrefix(url, prefix, async (redis, keys) => {
        await redis.del(...keys);
      });
    },
  };
}
