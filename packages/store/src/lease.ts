import { sql, type Expression, type SqlBool, type UpdateObject } from 'kysely';
import {
  InputKeyReusedError,
  isWellFormedTaskId,
  type InputRequests,
  type JsonObject,
  type JsonValue,
  type Task,
  type TaskError,
} from '@mcp-tasks/tasks';
import { jsonb, type Database, type Db } from './database.js';
import { StaleLeaseError } from './errors.js';
import { CANCELLED_BY_REQUEST } from './task-repository.js';
import { executePrepared } from './prepared-statements.js';
import { TASK_ROW_COLUMNS, taskRowToTask } from './task-row.js';
import type { ToolRecord } from './tool-record.js';

/** What a worker carries from claimLease into every write: the task and the epoch it claimed. */
export interface Fence {
  taskId: string;
  epoch: number;
}

/**
 * The fencing rule, in one place. A worker write wins only if the row still carries the epoch the
 * worker claimed, is `working` (so not terminal), and still has a lease owner (not released).
 * Lease expiry is deliberately NOT part of it: an expired holder's write is harmless as long as
 * nobody claimed after it, and a claim always bumps the epoch, so the epoch is the fence. What
 * expiry does change is who may act: an expired lease may be claimed by another worker, cancelled
 * directly by a client, or listed by the sweeper — each of which makes this predicate false.
 */
export function holds(fence: Fence): Expression<SqlBool> {
  return sql<SqlBool>`(id = ${fence.taskId} AND lease_epoch = ${fence.epoch}
    AND status = 'working' AND lease_owner IS NOT NULL)`;
}

function leaseExpiry(leaseMs: number): Expression<Date> {
  if (!Number.isInteger(leaseMs) || leaseMs <= 0) throw new RangeError(`bad lease ${leaseMs} ms`);
  return sql<Date>`now() + ${leaseMs}::bigint * interval '1 millisecond'`;
}

/**
 * Takes the task for one attempt if it is `working` and nobody holds a live lease on it; bumps the
 * epoch (the new fence) and the attempt count. Lease time comes from the database clock, so all
 * hosts agree on expiry. Concurrent claims serialize on the row; the losers re-check the now-held
 * row and get null. A claimed task may already carry `cancelRequestedAt`: the worker should then
 * settle it with markCancelled instead of running it.
 */
export async function claimLease(
  db: Db,
  taskId: string,
  workerId: string,
  leaseMs: number,
): Promise<{ fence: Fence; task: Task; tool: ToolRecord } | null> {
  if (!isWellFormedTaskId(taskId)) return null;
  const claim = db
    .updateTable('tasks')
    .set({
      lease_owner: workerId,
      lease_expires_at: leaseExpiry(leaseMs),
      lease_epoch: sql<number>`lease_epoch + 1`,
      attempts: sql<number>`attempts + 1`,
      // Taking over a lease nobody released means its holder died mid-attempt.
      failures: sql<number>`failures + (CASE WHEN lease_owner IS NOT NULL THEN 1 ELSE 0 END)`,
    })
    .where('id', '=', taskId)
    .where('status', '=', 'working')
    .where(sql<SqlBool>`(lease_owner IS NULL OR lease_expires_at <= now())`)
    .returning(TASK_ROW_COLUMNS);
  const [row] = (await executePrepared(db, 'claim_lease', claim)).rows;
  if (row === undefined) return null;
  return {
    fence: { taskId, epoch: row.lease_epoch },
    task: taskRowToTask(row),
    // Read with the claim so the worker needs no second round trip to check checkpoint versions.
    tool: { toolVersion: row.tool_version, toolMissingSince: row.tool_missing_since },
  };
}

/** Extends a held lease (even an expired one nobody reclaimed); tells the worker about a cancel request. */
export async function renewLease(
  db: Db,
  fence: Fence,
  leaseMs: number,
): Promise<{ cancelRequested: boolean }> {
  const renew = db
    .updateTable('tasks')
    .set({ lease_expires_at: leaseExpiry(leaseMs) })
    .where(holds(fence))
    .returning(sql<boolean>`cancel_requested_at IS NOT NULL`.as('cancel_requested'));
  const [row] = (await executePrepared(db, 'renew_lease', renew)).rows;
  if (row === undefined) throw new StaleLeaseError(fence.taskId, fence.epoch);
  return { cancelRequested: row.cancel_requested };
}

/**
 * Gives the task back (e.g. on shutdown) so another worker can claim it; the sweeper will find it.
 * A no-op if the fence was already superseded. If a cancel was requested meanwhile, nobody would
 * be left to act on it, so the task is cancelled instead. Resolves false if the fence no longer held.
 */
export async function releaseLease(db: Db, fence: Fence): Promise<boolean> {
  const release = db
    .updateTable('tasks')
    .set({
      lease_owner: null,
      lease_expires_at: null,
      ...cancelIfRequested(),
    })
    .where(holds(fence));
  const result = await executePrepared(db, 'release_lease', release);
  return result.numAffectedRows === 1n;
}

/** When a write leaves a task unheld, a pending cancel request takes effect now. */
function cancelIfRequested() {
  return {
    status: sql<
      'working' | 'cancelled'
    >`CASE WHEN cancel_requested_at IS NULL THEN 'working' ELSE 'cancelled' END`,
    status_message: sql<
      string | null
    >`CASE WHEN cancel_requested_at IS NULL THEN status_message ELSE ${CANCELLED_BY_REQUEST} END`,
  };
}

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
