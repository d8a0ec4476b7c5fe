import { sql, type SqlBool, type UpdateObject } from 'kysely';
import {
  InputKeyReusedError,
  type InputRequests,
  type JsonObject,
  type JsonValue,
  type TaskError,
} from '@mcp-tasks/tasks';
import { jsonb, type Database, type Db } from './database.js';
import { StaleLeaseError } from './errors.js';
import { cancelIfRequested, holds, leaseExpiry, type Fence } from './lease.js';
import { executePrepared } from './prepared-statements.js';
import { CANCELLED_BY_REQUEST } from './task-repository.js';

// The task writes a lease holder makes: each one is a conditional UPDATE on holds(fence), so a
// worker whose lease was superseded (or whose task ended) changes nothing and gets StaleLeaseError.

async function updateHeld(
  db: Db,
  statementName: string,
  fence: Fence,
  set: UpdateObject<Database, 'tasks'>,
): Promise<void> {
  const update = db.updateTable('tasks').set(set).where(holds(fence));
  const result = await executePrepared(db, statementName, update);
  if (result.numAffectedRows !== 1n) throw new StaleLeaseError(fence.taskId, fence.epoch);
}

/** What else a checkpoint write may carry, so the step boundary costs one round trip. */
export interface CheckpointOptions {
  /**
   * The version of the tool that wrote the checkpoint, recorded with it (see ToolRecord). A fresh
   * task then needs no write of its own to record the version before its first step.
   */
  toolVersion?: number;
  /** Also renews the lease for this long: the checkpoint is the renewal before the next step. */
  leaseMs?: number;
}

/**
 * Progress: the step state to resume from, and the message clients see. Answers whether a cancel
 * was requested, so a worker that renews with it learns of one at the step boundary.
 */
export async function saveCheckpoint(
  db: Db,
  fence: Fence,
  checkpoint: JsonValue,
  statusMessage: string | null,
  options: CheckpointOptions = {},
): Promise<{ cancelRequested: boolean }> {
  const save = db
    .updateTable('tasks')
    .set({
      checkpoint: checkpoint === null ? null : jsonb(checkpoint),
      status_message: statusMessage,
      ...(options.toolVersion === undefined ? {} : { tool_version: options.toolVersion }),
      ...(options.leaseMs === undefined ? {} : { lease_expires_at: leaseExpiry(options.leaseMs) }),
    })
    .where(holds(fence))
    .returning(sql<boolean>`cancel_requested_at IS NOT NULL`.as('cancel_requested'));
  const [row] = (await executePrepared(db, 'save_checkpoint', save)).rows;
  if (row === undefined) throw new StaleLeaseError(fence.taskId, fence.epoch);
  return { cancelRequested: row.cancel_requested };
}

/**
 * Parks the task in `input_required` with a fresh round of keys and gives up the lease (nobody
 * holds a task waiting for input). A key issued before, answered or not, is refused with
 * InputKeyReusedError (R16) and nothing changes. If a cancel was requested while the worker ran,
 * the task is cancelled instead of parked (there would be no worker left to honour the request).
 */
export async function requestInput(
  db: Db,
  fence: Fence,
  requests: InputRequests,
  checkpoint: JsonValue,
  statusMessage: string | null,
  options: Pick<CheckpointOptions, 'toolVersion'> = {},
): Promise<void> {
  const keys = Object.keys(requests);
  if (keys.length === 0) throw new RangeError('an input round needs at least one request');
  const keyArray = sql<string[]>`${keys}::text[]`;
  const park = db
    .updateTable('tasks')
    .set({
      status: sql`CASE WHEN cancel_requested_at IS NULL THEN 'input_required' ELSE 'cancelled' END`,
      input_requests: sql`CASE WHEN cancel_requested_at IS NULL THEN ${JSON.stringify(requests)}::jsonb
                          ELSE '{}'::jsonb END`,
      status_message: sql`CASE WHEN cancel_requested_at IS NULL THEN ${statusMessage}::text
                          ELSE ${CANCELLED_BY_REQUEST} END`,
      issued_input_keys: sql`issued_input_keys || ${keyArray}`,
      checkpoint: checkpoint === null ? null : jsonb(checkpoint),
      ...(options.toolVersion === undefined ? {} : { tool_version: options.toolVersion }),
      lease_owner: null,
      lease_expires_at: null,
      enqueued_at: null,
    })
    .where(holds(fence))
    .where(sql<SqlBool>`NOT (issued_input_keys && ${keyArray})`);
  const result = await executePrepared(db, 'request_input', park);
  if (result.numAffectedRows === 1n) return;
  // Lost: say why, from a second look (only on this rare path).
  const row = await db
    .selectFrom('tasks')
    .select(['issued_input_keys'])
    .where(holds(fence))
    .executeTakeFirst();
  const reused = row?.issued_input_keys.filter((key) => keys.includes(key)) ?? [];
  if (reused.length > 0) throw new InputKeyReusedError(reused);
  throw new StaleLeaseError(fence.taskId, fence.epoch);
}

/** `statusMessage`, when given, replaces the last progress message (which would be stale now). */
export async function completeTask(
  db: Db,
  fence: Fence,
  result: JsonObject,
  statusMessage?: string | null,
): Promise<void> {
  await updateHeld(db, 'complete_task', fence, {
    status: 'completed',
    result: jsonb(result),
    ...(statusMessage === undefined ? {} : { status_message: statusMessage }),
    lease_owner: null,
    lease_expires_at: null,
  });
}

export async function failTask(
  db: Db,
  fence: Fence,
  error: TaskError,
  statusMessage: string | null,
): Promise<void> {
  await updateHeld(db, 'fail_task', fence, {
    status: 'failed',
    error: jsonb(error),
    status_message: statusMessage,
    lease_owner: null,
    lease_expires_at: null,
  });
}

export async function markCancelled(
  db: Db,
  fence: Fence,
  statusMessage: string | null,
): Promise<void> {
  await updateHeld(db, 'mark_cancelled', fence, {
    status: 'cancelled',
    status_message: statusMessage,
    lease_owner: null,
    lease_expires_at: null,
  });
}

/**
 * An attempt died of an unexpected error: keep the message, give the lease back so a retry can
 * claim; counts one more failure (the retry budget). A pending cancel request takes effect instead.
 */
export async function recordAttemptFailure(
  db: Db,
  fence: Fence,
  message: string,
): Promise<{ failures: number }> {
  const record = db
    .updateTable('tasks')
    .set({
      failures: sql<number>`failures + 1`,
      last_attempt_error: message,
      lease_owner: null,
      lease_expires_at: null,
      ...cancelIfRequested(),
    })
    .where(holds(fence))
    .returning('failures');
  const [row] = (await executePrepared(db, 'record_attempt_failure', record)).rows;
  if (row === undefined) throw new StaleLeaseError(fence.taskId, fence.epoch);
  return { failures: row.failures };
}
