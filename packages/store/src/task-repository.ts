import { sql } from 'kysely';
import {
  isWellFormedTaskId,
  type InputResponses,
  type Task,
  type TaskOperation,
  type TaskOwner,
  type TaskStatus,
} from '@mcp-tasks/tasks';
import { jsonb, type Db, type TaskRow } from './database.js';
import { TaskIdConflictError } from './errors.js';
import { taskRowToTask } from './task-row.js';

/** The status message a task gets when a cancel request ends it without a worker. */
export const CANCELLED_BY_REQUEST = 'cancelled by request';
/** The status message of a task whose last answer just arrived, until its worker reports. */
export const RESUMED_MESSAGE = 'All input received; resuming';

export interface NewTask {
  id: string;
  owner: TaskOwner;
  operation: TaskOperation;
  ttlMs: number | null;
  pollIntervalMs: number | null;
  statusMessage: string | null;
}

/**
 * Inserts a `working` task (autocommit) and returns the WAL position a replica must replay before
 * the row is readable there. The position is read after COMMIT returned: only then is the commit
 * record in the WAL. `pg_current_wal_insert_lsn` rather than `pg_current_wal_lsn`, because with
 * `synchronous_commit = off` the commit may not have been written out yet, and the insert position
 * is past it either way.
 */
/**
 * Inserts the task; returns `created: false` with the existing task when the same owner already
 * created the same operation under this id (an idempotent retry). The same id for a different
 * owner or operation is a TaskIdConflictError and changes nothing.
 */
export async function createTask(
  db: Db,
  input: NewTask,
): Promise<{ task: Task; commitLsn: string; created: boolean; enqueued: boolean }> {
  if (!isWellFormedTaskId(input.id)) throw new RangeError(`malformed task id ${input.id}`);
  const inserted = await db
    .insertInto('tasks')
    .values({
      id: input.id,
      tenant: input.owner.tenant,
      principal: input.owner.principal,
      method: input.operation.method,
      tool_name: input.operation.toolName,
      arguments: jsonb(input.operation.arguments),
      ttl_ms: input.ttlMs,
      poll_interval_ms: input.pollIntervalMs,
      status_message: input.statusMessage,
    })
    .onConflict((conflict) => conflict.column('id').doNothing())
    .returningAll()
    .executeTakeFirst();
  const row = inserted ?? (await existingTwin(db, input));
  const lsn = await sql<{ lsn: string }>`SELECT pg_current_wal_insert_lsn()::text AS lsn`.execute(
    db,
  );
  const commitLsn = lsn.rows[0]?.lsn;
  if (commitLsn === undefined) throw new Error('pg_current_wal_insert_lsn returned nothing');
  return {
    task: taskRowToTask(row),
    commitLsn,
    created: inserted !== undefined,
    enqueued: row.enqueued_at !== null,
  };
}

async function existingTwin(db: Db, input: NewTask): Promise<TaskRow> {
  const row = await db
    .selectFrom('tasks')
    .selectAll()
    .where('id', '=', input.id)
    .executeTakeFirstOrThrow();
  const same =
    row.tenant === input.owner.tenant &&
    row.principal === input.owner.principal &&
    row.method === input.operation.method &&
    row.tool_name === input.operation.toolName &&
    JSON.stringify(canonical(row.arguments)) ===
      JSON.stringify(canonical(input.operation.arguments));
  if (!same) throw new TaskIdConflictError(input.id);
  return row;
}

/** jsonb does not keep key order; compare arguments with sorted keys. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

/** For the worker and the sweeper: no owner check. */
export async function getTask(db: Db, taskId: string): Promise<Task | undefined> {
  if (!isWellFormedTaskId(taskId)) return undefined;
  const row = await db.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirst();
  return row === undefined ? undefined : taskRowToTask(row);
}

/**
 * A task as its owner sees it. Missing, foreign and malformed ids all answer `undefined` (R15), and
 * a malformed id never reaches the database.
 */
export async function getTaskForPrincipal(
  db: Db,
  tenant: string,
  principal: string,
  taskId: string,
): Promise<Task | undefined> {
  if (!isWellFormedTaskId(taskId)) return undefined;
  const row = await db
    .selectFrom('tasks')
    .selectAll()
    .where('id', '=', taskId)
    .where('tenant', '=', tenant)
    .where('principal', '=', principal)
    .executeTakeFirst();
  return row === undefined ? undefined : taskRowToTask(row);
}

/** The owner's tasks among `taskIds` in one query (listen loads); foreign and malformed ids drop out. */
export async function getTasksForPrincipal(
  db: Db,
  tenant: string,
  principal: string,
  taskIds: readonly string[],
): Promise<Task[]> {
  const ids = taskIds.filter(isWellFormedTaskId);
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('tasks')
    .selectAll()
    .where('id', 'in', ids)
    .where('tenant', '=', tenant)
    .where('principal', '=', principal)
    .execute();
  return rows.map(taskRowToTask);
}

/**
 * One statement: lock the owner's row, keep only answers to outstanding keys (R17), merge them,
 * drop those keys from the pending requests, and when none remain move to `working`, unleased and
 * not yet enqueued (claimable; the caller dispatches). Two concurrent calls serialize on the row
 * lock, the second recomputes from the first's result, so both answers count and exactly one of
 * them sees the last key go and reports `resumed`.
 */
export async function recordInputResponses(
  db: Db,
  owner: TaskOwner,
  taskId: string,
  responses: InputResponses,
): Promise<{ found: boolean; resumed: boolean }> {
  if (!isWellFormedTaskId(taskId)) return { found: false, resumed: false };
  const result = await sql<{ found: boolean; status: TaskStatus | null }>`
    WITH current_task AS (
      SELECT id, input_requests FROM tasks
      WHERE id = ${taskId} AND tenant = ${owner.tenant} AND principal = ${owner.principal}
      FOR UPDATE
    ),
    answered AS (
      SELECT coalesce(jsonb_object_agg(r.key, r.value), '{}'::jsonb) AS responses,
             coalesce(array_agg(r.key), '{}'::text[]) AS keys
      FROM current_task, jsonb_each(${JSON.stringify(responses)}::jsonb) AS r(key, value)
      WHERE current_task.input_requests ? r.key
    ),
    updated AS (
      UPDATE tasks t
      SET input_responses = t.input_responses || answered.responses,
          input_requests = t.input_requests - answered.keys,
          status = CASE WHEN t.input_requests - answered.keys = '{}'::jsonb THEN 'working'
                        ELSE t.status END,
          status_message = CASE WHEN t.input_requests - answered.keys = '{}'::jsonb
                                THEN ${RESUMED_MESSAGE} ELSE t.status_message END,
          lease_owner = NULL,
          lease_expires_at = NULL,
          enqueued_at = CASE WHEN t.input_requests - answered.keys = '{}'::jsonb THEN NULL
                             ELSE t.enqueued_at END
      FROM current_task, answered
      WHERE t.id = current_task.id AND t.status = 'input_required' AND cardinality(answered.keys) > 0
      RETURNING t.status
    )
    SELECT EXISTS (SELECT 1 FROM current_task) AS found, (SELECT status FROM updated) AS status
  `.execute(db);
  const row = result.rows[0];
  return { found: row?.found === true, resumed: row?.status === 'working' };
}

/**
 * Records the cancel intent once (idempotent; a terminal task keeps its status and only gains the
 * timestamp, R18). A task nobody holds — waiting for input, or working with no live lease — is
 * cancelled on the spot, since no worker would ever see the request; a held task is left to its
 * worker, which learns of it from renewLease / claimLease and may still complete.
 */
export async function requestCancel(
  db: Db,
  owner: TaskOwner,
  taskId: string,
): Promise<{ found: boolean; cancelledDirectly: boolean }> {
  if (!isWellFormedTaskId(taskId)) return { found: false, cancelledDirectly: false };
  const result = await sql<{ found: boolean; cancelled_directly: boolean }>`
    WITH current_task AS (
      SELECT id,
             (status = 'input_required'
              OR (status = 'working' AND (lease_owner IS NULL OR lease_expires_at <= now()))) AS unheld
      FROM tasks
      WHERE id = ${taskId} AND tenant = ${owner.tenant} AND principal = ${owner.principal}
      FOR UPDATE
    ),
    updated AS (
      UPDATE tasks t
      SET cancel_requested_at = coalesce(t.cancel_requested_at, now()),
          status = CASE WHEN current_task.unheld THEN 'cancelled' ELSE t.status END,
          status_message = CASE WHEN current_task.unheld THEN ${CANCELLED_BY_REQUEST}
                                ELSE t.status_message END,
          input_requests = CASE WHEN current_task.unheld THEN '{}'::jsonb ELSE t.input_requests END,
          lease_owner = CASE WHEN current_task.unheld THEN NULL ELSE t.lease_owner END,
          lease_expires_at = CASE WHEN current_task.unheld THEN NULL ELSE t.lease_expires_at END
      FROM current_task
      WHERE t.id = current_task.id AND (t.cancel_requested_at IS NULL OR current_task.unheld)
      RETURNING current_task.unheld
    )
    SELECT EXISTS (SELECT 1 FROM current_task) AS found,
           coalesce((SELECT unheld FROM updated), false) AS cancelled_directly
  `.execute(db);
  const row = result.rows[0];
  return { found: row?.found === true, cancelledDirectly: row?.cancelled_directly === true };
}
