import type { ColumnType, Generated, Kysely, Selectable } from 'kysely';
import type {
  InputRequests,
  InputResponses,
  JsonObject,
  JsonValue,
  TaskError,
  TaskOperation,
  TaskStatus,
} from '@mcp-tasks/tasks';

// The tables as Kysely sees them, and the Db type over them: the lowest room of the store, so
// every module that takes a Db can import it without importing how a pool is made (database.ts).

/**
 * A W3C trace context as the task row keeps it (migration 0019): the carrier a propagator
 * injects into and extracts from. Opaque to the store; docs/tracing.md says what joins it.
 */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
  baggage?: string;
}

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
