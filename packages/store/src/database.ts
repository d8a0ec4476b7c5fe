import {
  Kysely,
  PostgresDialect,
  sql,
  type ColumnType,
  type Generated,
  type LogConfig,
  type RawBuilder,
  type Selectable,
} from 'kysely';
import pg from 'pg';
import type {
  InputRequests,
  InputResponses,
  JsonObject,
  JsonValue,
  TaskError,
  TaskOperation,
  TaskStatus,
} from '@mcp-tasks/tasks';
import type { PoolerMode } from './database-settings.js';
import { namePreparedStatements, runPreparedOnPool } from './prepared-statements.js';
import type { TraceContext } from './trace-context.js';

/** One row of `tasks`, snake_case as in SQL; `taskRowToTask` is the only way into the domain. */
export interface TasksTable {
  id: string;
  tenant: string;
  principal: string;
  method: TaskOperation['method'];
  tool_name: string;
  arguments: JsonObject;
  status: Generated<TaskStatus>;
  status_message: string | null;
  created_at: Generated<Date>;
  /** Maintained by a trigger: bumped only when something a client can see changes. */
  last_updated_at: Generated<Date>;
  /** bigint (a ttl can exceed 2^31 ms), so pg hands it back as a string. */
  ttl_ms: ColumnType<string | null, number | null, number | null>;
  poll_interval_ms: number | null;
  /** created_at + ttl_ms, maintained by a trigger (a generated column cannot: timestamptz + interval is not immutable). */
  expires_at: ColumnType<Date | null, never, never>;
  result: JsonObject | null;
  error: TaskError | null;
  input_requests: Generated<InputRequests>;
  issued_input_keys: Generated<string[]>;
  input_responses: Generated<InputResponses>;
  cancel_requested_at: Date | null;
  checkpoint: JsonValue | null;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  lease_epoch: Generated<number>;
  attempts: Generated<number>;
  failures: Generated<number>;
  last_attempt_error: string | null;
  enqueued_at: Date | null;
  /** The tool version that wrote `checkpoint` (migration 0005); NULL reads as version 1. */
  tool_version: Generated<number | null>;
  /** When a worker first found it lacked the task's tool (migration 0005). */
  tool_missing_since: Generated<Date | null>;
  /**
   * A subscriptions/listen stream named this task (migration 0007): only then, and until
   * `listened_until`, do its visible changes run pg_notify.
   */
  listened: Generated<boolean>;
  /** When the listen flag lapses unless a stream renews it (migration 0008); NULL: never. */
  listened_until: Generated<Date | null>;
  /** Step outcomes saved so far, checkpoints and input rounds (migration 0012): the step index. */
  steps_saved: Generated<number>;
  /** The W3C trace context the create ran under (migration 0019); NULL when tracing was off. */
  trace_context: Generated<TraceContext | null>;
  /** The `traceparent` of the last attempt span (migration 0019): a takeover links it. */
  trace_last_attempt: Generated<string | null>;
}

/** One row of `task_events` (migration 0017): written by triggers on `tasks` and by console actions. */
export interface TaskEventsTable {
  id: Generated<string>;
  task_id: string;
  at: Generated<Date>;
  kind: string;
  /** Who acted, for console actions (`console:<operator>`); NULL for events the triggers derive. */
  actor: string | null;
  data: Generated<JsonObject>;
}

/** The one row of `sweeper_state` (migration 0020): the last sweep the sweeper leader made. */
export interface SweeperStateTable {
  singleton: Generated<boolean>;
  worker_id: string;
  swept_at: Date;
  duration_ms: number;
  expired: number;
  redispatched: number;
  deleted: number;
  /** bigint: pg returns it as a string. */
  retention_ms: string | number;
  interval_ms: number;
}

export interface Database {
  tasks: TasksTable;
  task_events: TaskEventsTable;
  sweeper_state: SweeperStateTable;
}

export type TaskRow = Selectable<TasksTable>;
export type Db = Kysely<Database>;

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
   * statement again: with 10 s, the connections a burst opened closed during the next lull and the
   * following burst paid for them all at once (a ~1 s create stall at 200/s in the bench).
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
