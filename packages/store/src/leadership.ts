import pg from 'pg';
import { DEFAULT_CONNECTION_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS } from './database.js';

export const LEADERSHIP_APPLICATION_NAME = 'mcp-tasks leader';

export interface Leadership {
  /** Unlocks and closes the dedicated connection. Idempotent. */
  release(): Promise<void>;
  /**
   * Resolves if the connection drops: a session lock dies with its session, so from then on this
   * process is no longer the leader and must stop sweeping (and may try to acquire again).
   * Also resolves after release().
   */
  readonly lost: Promise<void>;
}

/**
 * Elects one sweeper: a session-level advisory lock on a connection of its own, kept open while
 * leading (a pooled connection would hand the lock to whoever checks it out next).
 */
export async function tryAcquireLeadership(
  connectionString: string,
  lockName: string,
): Promise<Leadership | null> {
  // Bounded like the pool (createDb): a hung connect or unlock must not block a sweep or shutdown.
  const client = new pg.Client({
    connectionString,
    application_name: LEADERSHIP_APPLICATION_NAME,
    connectionTimeoutMillis: DEFAULT_CONNECTION_TIMEOUT_MS,
    keepAlive: true,
    query_timeout: DEFAULT_STATEMENT_TIMEOUT_MS,
  });
  let markLost: () => void = () => undefined;
  const lost = new Promise<void>((resolve) => (markLost = resolve));
  client.on('error', () => markLost());
  client.on('end', () => markLost());
  await client.connect();
  let acquired = false;
  try {
    const result = await client.query<{ acquired: boolean }>(
      'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS acquired',
      [lockName],
    );
    acquired = result.rows[0]?.acquired === true;
  } finally {
    if (!acquired) await client.end();
  }
  if (!acquired) return null;
  let released: Promise<void> | undefined;
  return {
    lost,
    release() {
      released ??= (async () => {
        try {
          await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [lockName]);
        } catch {
          // The connection is gone, and the lock with it.
        } finally {
          await client.end().catch(() => undefined);
        }
      })();
      return released;
    },
  };
}
