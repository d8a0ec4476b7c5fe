import pg from 'pg';
import { DEFAULT_CONNECTION_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS } from '../db/database.js';
import { SET_IDLE_SESSION_TIMEOUT, TRY_LOCK, UNLOCK } from '../sql/sweeper.js';

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
    const result = await client.query<{ acquired: boolean }>(TRY_LOCK, [lockName]);
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
          await client.query(UNLOCK, [lockName]);
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

/** One process's leadership connection, kept across terms (see createLeadershipSession). */
export interface LeadershipSession {
  /**
   * Takes the lock for one term on the session's connection, opening it first if there is none
   * (or the last one died). False if another process leads; throws if Postgres is unreachable.
   */
  acquire(): Promise<boolean>;
  /** Ends the term: unlocks, keeping the connection for the next one. */
  release(): Promise<void>;
  /** True from a successful acquire() until release() or the loss of the connection. */
  isLeader(): boolean;
  close(): Promise<void>;
}

interface LeadershipSessionOptions {
  connectionString: string;
  lockName: string;
  onLost?: (error?: unknown) => void;
  /**
   * Postgres ends the session after this long without a query on it (`idle_session_timeout`),
   * and the lock with it. A term keeps this connection idle while it works on the pool, so a
   * leader frozen mid-term (SIGSTOP, a paused VM) or cut off from Postgres otherwise held the
   * lock, and stopped every other process's sweeps, until the server noticed the dead peer:
   * hours with the default TCP keepalive. Must exceed the longest term; 0 sets no bound.
   */
  idleSessionTimeoutMs?: number;
}

/**
 * Like tryAcquireLeadership, but one connection per process for all terms instead of one per
 * attempt: a sweeper ticking every few seconds on every worker would otherwise open and close a
 * Postgres connection per tick. The connection's 'error' or 'end' ends leadership at once
 * (isLeader() turns false, and onLost is called during a term), so the caller can stop work it no
 * longer has the right to do; the next acquire() opens a fresh connection.
 */
export function createLeadershipSession(options: LeadershipSessionOptions): LeadershipSession {
  let client: pg.Client | undefined;
  let leading = false;

  const drop = (dead: pg.Client, error?: unknown): void => {
    if (client !== dead) return;
    client = undefined;
    dead.end().catch(() => undefined);
    if (leading) {
      leading = false;
      options.onLost?.(error);
    }
  };

  const connection = async (): Promise<pg.Client> => {
    if (client !== undefined) return client;
    const next = new pg.Client({
      connectionString: options.connectionString,
      application_name: LEADERSHIP_APPLICATION_NAME,
      connectionTimeoutMillis: DEFAULT_CONNECTION_TIMEOUT_MS,
      keepAlive: true,
      query_timeout: DEFAULT_STATEMENT_TIMEOUT_MS,
    });
    next.on('error', (error) => drop(next, error));
    next.on('end', () => drop(next));
    try {
      await next.connect();
      if (options.idleSessionTimeoutMs !== undefined && options.idleSessionTimeoutMs > 0) {
        await next.query(SET_IDLE_SESSION_TIMEOUT, [String(options.idleSessionTimeoutMs)]);
      }
    } catch (error) {
      await next.end().catch(() => undefined);
      throw error;
    }
    client = next;
    return next;
  };

  return {
    async acquire() {
      const current = await connection();
      try {
        const result = await current.query<{ acquired: boolean }>(TRY_LOCK, [options.lockName]);
        leading = result.rows[0]?.acquired === true && client === current;
        return leading;
      } catch (error) {
        drop(current, error);
        throw error;
      }
    },
    async release() {
      const current = client;
      const wasLeading = leading;
      leading = false;
      if (!wasLeading || current === undefined) return;
      try {
        await current.query(UNLOCK, [options.lockName]);
      } catch (error) {
        // The lock died with the session; a fresh connection serves the next term.
        drop(current, error);
      }
    },
    isLeader: () => leading,
    async close() {
      const current = client;
      client = undefined;
      leading = false;
      await current?.end().catch(() => undefined);
    },
  };
}
