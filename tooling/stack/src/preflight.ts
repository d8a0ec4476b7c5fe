import { Redis } from 'ioredis';
import pg from 'pg';

/** A start-up problem the user can act on: printed as one line, never with a stack trace. */
export class StackStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StackStartError';
  }
}

const CONNECT_TIMEOUT_MS = 3_000;

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

function reason(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return reason(error.errors[0]);
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code)
      ? `${code}: ${error.message}`
      : error.message;
  }
  return String(error);
}

async function query(connectionString: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An unreachable server can also surface as an 'error' event; the awaited call reports it.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query(sql);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Checks that Postgres answers at `databaseUrl` and creates its database when the server has none
 * (connecting through the server's `postgres` database). Returns whether it created it.
 */
export async function ensurePostgres(databaseUrl: string): Promise<{ created: boolean }> {
  try {
    await query(databaseUrl, 'SELECT 1');
    return { created: false };
  } catch (error) {
    if ((error as { code?: unknown }).code !== '3D000') throw postgresDown(databaseUrl, error);
  }
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  try {
    await query(admin.toString(), `CREATE DATABASE "${name.replaceAll('"', '""')}"`);
  } catch (error) {
    // Another stack created it at the same moment.
    if ((error as { code?: unknown }).code !== '42P04') {
      throw new StackStartError(
        `Postgres at ${redactUrl(databaseUrl)} has no database "${name}" and creating it failed (${reason(error)}); create it with: createdb -h ${url.hostname} -p ${url.port || '5432'} -U ${url.username || 'postgres'} ${name}`,
      );
    }
  }
  return { created: true };
}

function postgresDown(databaseUrl: string, error: unknown): StackStartError {
  return new StackStartError(
    `Postgres does not answer at ${redactUrl(databaseUrl)} (${reason(error)}). Start one (Debian: pg_ctlcluster --skip-systemctl-redirect 15 main start; Docker: docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15) or point DATABASE_URL at yours.`,
  );
}

/** Checks that Redis answers PING at `redisUrl`, with no retries. */
export async function ensureRedis(redisUrl: string): Promise<void> {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  // The socket's own error (ECONNREFUSED, …) says more than the rejected "Connection is closed".
  let socketError: unknown;
  redis.on('error', (error) => (socketError ??= error));
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new StackStartError(
      `Redis does not answer at ${redactUrl(redisUrl)} (${reason(socketError ?? error)}). Start one (Debian: redis-server --daemonize yes --port 6379; Docker: docker run -d -p 6379:6379 redis:7) or point REDIS_URL at yours.`,
    );
  } finally {
    redis.disconnect();
  }
}
