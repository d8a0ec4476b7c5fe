import { Kysely, PostgresDialect, sql, type LogConfig, type RawBuilder } from 'kysely';
import pg from 'pg';
import type { InputRequests, JsonValue, TaskError } from '@mcp-tasks/tasks';
import type { PoolerMode } from './database-settings.js';
import { namePreparedStatements, runPreparedOnPool } from './prepared-statements.js';
import type { Database, Db } from './schema.js';

export type {
  Database,
  Db,
  SweeperStateTable,
  TaskEventsTable,
  TaskRow,
  TasksTable,
} from './schema.js';

export interface CreateDbOptions {
  connectionString: string;
  max?: number;
  applicationName?: string;
  /** Kysely's query log hook (e.g. the benchmark counts round trips with it). */
  log?: LogConfig;
  /** Bound on opening a connection (an unreachable or black-holed server); default 5000 ms. */
  connectionTimeoutMs?: number;
  /**
   * Bound on one statement: the server's `statement_timeout`, and a client-side read timeout a
   * little longer for when the server or network stops answering altogether. Default 10 000 ms;
   * 0 turns both off (for work that may legitimately wait long, such as a migration lock).
   */
  statementTimeoutMs?: number;
  /**
   * How long an idle connection is kept before it is closed; default 600 000 ms (pg's own default
   * is 10 s). Opening a backend costs a fork, a cold catalogue cache and preparing every named
   * statement again: with a short timeout, the connections a burst opened close during the next
   * lull and the following burst pays for them all at once, as a stall.
   */
  idleTimeoutMs?: number;
  /**
   * What connectionString leads to. `transaction` (PgBouncer or a managed pooler in transaction
   * mode): no session parameter goes in the startup packet (PgBouncer refuses statement_timeout
   * there, or drops it when told to ignore it), so the server-side bound must come from the
   * database or role default (`ALTER DATABASE … SET statement_timeout`, checked at start-up by
   * checkStatementTimeout); the client-side read timeout stays. Default `none`.
   */
  pooler?: PoolerMode;
  /**
   * Named prepared statements (prepared-statements.ts). Default: on, off behind a transaction
   * pooler, where a statement prepared in one transaction's server connection is unknown in the next.
   */
  preparedStatements?: boolean;
}

export const DEFAULT_CONNECTION_TIMEOUT_MS = 5_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 600_000;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;
/** The client-side bound fires after the server's, so a slow statement fails as 57014 first. */
const CLIENT_READ_MARGIN_MS = 2_000;

/**
 * Every bound is set, because without them one hung renewal or sweep waits for ever: a lease
 * keeper stuck on it can neither renew nor notice that it stopped holding the lease.
 */
export function createDb(options: CreateDbOptions): Db {
  return createDbOnPools([options.connectionString], options);
}

/**
 * One Db over several servers that hold the same data (the replicas of a reader endpoint listed
 * in DATABASE_READ_URL): each checkout takes the next server's pool in turn, so reads and the
 * create's readability polls are spread over all of them. `max` is per server.
 */
export function createSpreadDb(
  connectionStrings: readonly string[],
  options: Omit<CreateDbOptions, 'connectionString'>,
): Db {
  if (connectionStrings.length === 0) throw new Error('createSpreadDb needs at least one URL');
  return createDbOnPools(connectionStrings, options);
}

function createDbOnPools(
  connectionStrings: readonly string[],
  options: Omit<CreateDbOptions, 'connectionString'>,
): Db {
  const prepared = options.preparedStatements ?? options.pooler !== 'transaction';
  const pools = connectionStrings.map((connectionString) => createPool(connectionString, options));
  const pool = pools.length === 1 ? pools[0]! : roundRobin(pools);
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    ...(options.log === undefined ? {} : { log: options.log }),
  });
  if (options.log === undefined && prepared) runPreparedOnPool(db, pool);
  return db;
}

function createPool(
  connectionString: string,
  options: Omit<CreateDbOptions, 'connectionString'>,
): pg.Pool {
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const pooled = options.pooler === 'transaction';
  const prepared = options.preparedStatements ?? !pooled;
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'mcp-tasks',
    connectionTimeoutMillis: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    idleTimeoutMillis: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    // Detects a peer that vanished without closing the socket (node loss, a dropped NAT entry).
    keepAlive: true,
    ...(statementTimeoutMs > 0
      ? { query_timeout: statementTimeoutMs + CLIENT_READ_MARGIN_MS }
      : {}),
    // A transaction pooler refuses (or silently drops) session parameters at connect.
    ...(statementTimeoutMs > 0 && !pooled ? { statement_timeout: statementTimeoutMs } : {}),
  });
  // An idle client dropped by the server emits 'error' on the pool; unhandled, it would kill the
  // process. The next checkout simply gets a fresh connection.
  pool.on('error', () => undefined);
  // A checked-out client whose server session dies (restart, failover, pg_terminate_backend) fails
  // its query and then emits 'error' for the closed socket, which the pool does not handle while
  // the client is out: without a listener that event would crash the process.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    if (prepared) namePreparedStatements(client);
  });
  return pool;
}

/** The part of pg.Pool that Kysely and executePrepared use, taking each pool in turn. */
function roundRobin(pools: readonly pg.Pool[]): pg.Pool {
  let next = 0;
  const take = (): pg.Pool => pools[next++ % pools.length]!;
  const spread = {
    connect: () => take().connect(),
    query: (...args: unknown[]) => (take().query as (...a: unknown[]) => unknown)(...args),
    end: async () => {
      await Promise.all(pools.map((pool) => pool.end()));
    },
  };
  return spread as unknown as pg.Pool;
}

/**
 * A JSON value as a jsonb parameter. pg would turn a JS array into a Postgres array literal and
 * pass a string through unquoted, so every jsonb value is stringified here, explicitly.
 */
export function jsonb<T extends JsonValue | TaskError | InputRequests>(value: T): RawBuilder<T> {
  return sql<T>`${JSON.stringify(value)}::jsonb`;
}
