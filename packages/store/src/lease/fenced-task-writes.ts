import { sql, type RawBuilder, type SqlBool, type UpdateObject } from 'kysely';
import {
  InputKeyReusedError,
  type InputRequests,
  type JsonObject,
  type JsonValue,
  type TaskError,
} from '@mcp-tasks/tasks';
import { jsonb, type Database, type Db } from '../db/database.js';
import { StaleLeaseError } from '../errors.js';
import {
  HOLDS_EACH_FENCE,
  HOLDS_EACH_FENCE_TEXT,
  cancelIfRequested,
  holds,
  leaseExpiry,
  type Fence,
} from './lease.js';
import { executePrepared } from '../db/prepared-statements.js';
import { CANCELLED_BY_REQUEST } from '../rows/task-repository.js';
import { lockInIdOrder } from '../sql/row-locks.js';

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

/**
 * The head of a shared write under many fences: `rows` as `s` (one row per fence, with `id` and
 * `epoch`), and the held rows among them locked in id order as `locked` (sql/row-locks.ts). The
 * UPDATE that follows reads `FROM s JOIN locked USING (id)`, so it never waits for a row itself.
 */
const withHeldRowsLocked = (rows: RawBuilder<unknown>) => sql`WITH s AS (${rows}),
    locked AS MATERIALIZED (${sql.raw(lockInIdOrder({ from: 'tasks AS t, s', where: HOLDS_EACH_FENCE_TEXT }))})`;

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
      steps_saved: sql<number>`steps_saved + 1`,
      ...(options.toolVersion === undefined ? {} : { tool_version: options.toolVersion }),
      ...(options.leaseMs === undefined ? {} : { lease_expires_at: leaseExpiry(options.leaseMs) }),
    })
    .where(holds(fence))
    .returning(sql<boolean>`cancel_requested_at IS NOT NULL`.as('cancel_requested'));
  const [row] = (await executePrepared(db, 'save_checkpoint', save)).rows;
  if (row === undefined) throw new StaleLeaseError(fence.taskId, fence.epoch);
  return { cancelRequested: row.cancel_requested };
}

/** One task's checkpoint in a shared statement (saveCheckpoints). */
export interface CheckpointWrite {
  fence: Fence;
  checkpoint: JsonValue;
  statusMessage: string | null;
  toolVersion?: number;
}

/**
 * Several checkpoints in one statement, each under its own fence (the same rule as holds()), each
 * renewing its lease for `leaseMs` from the statement's start as saveCheckpoint does. Resolves
 * with the fences that held, as `taskId:epoch`, each with whether a cancel was requested; the
 * caller turns the others into StaleLeaseError. The rows are locked in id order, whatever the
 * order of `writes` (withHeldRowsLocked).
 */
export async function saveCheckpoints(
  db: Db,
  writes: readonly CheckpointWrite[],
  leaseMs: number,
): Promise<Map<string, { cancelRequested: boolean }>> {
  const column = <T>(pick: (write: CheckpointWrite) => T): T[] => writes.map(pick);
  const save = sql<{ id: string; lease_epoch: number; cancel_requested: boolean }>`
    ${withHeldRowsLocked(sql`
      SELECT s.id, s.epoch, s.checkpoint, s.status_message, s.tool_version
      FROM unnest(
      ${column((w) => w.fence.taskId)}::text[],
      ${column((w) => w.fence.epoch)}::int[],
      ${column((w) => (w.checkpoint === null ? null : JSON.stringify(w.checkpoint)))}::text[],
      ${column((w) => w.statusMessage)}::text[],
      ${column((w) => w.toolVersion ?? null)}::int[]
    ) AS s(id, epoch, checkpoint, status_message, tool_version)`)}
    UPDATE tasks AS t SET
      checkpoint = s.checkpoint::jsonb,
      status_message = s.status_message,
      steps_saved = t.steps_saved + 1,
      tool_version = coalesce(s.tool_version, t.tool_version),
      lease_expires_at = ${leaseExpiry(leaseMs)}
    FROM s JOIN locked USING (id)
    WHERE ${HOLDS_EACH_FENCE}
    RETURNING t.id, t.lease_epoch, t.cancel_requested_at IS NOT NULL AS cancel_requested`;
  const { rows } = await executePrepared(db, 'save_checkpoints', save);
  return new Map(
    rows.map((row) => [`${row.id}:${row.lease_epoch}`, { cancelRequested: row.cancel_requested }]),
  );
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
      steps_saved: sql<number>`steps_saved + 1`,
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

/** One task's input pause in a shared statement (requestInputs). */
export interface InputPauseWrite {
  fence: Fence;
  requests: InputRequests;
  checkpoint: JsonValue;
  statusMessage: string | null;
  toolVersion?: number;
}

/**
 * Several requestInput writes in one statement, each under its own fence and refused as a whole
 * if any of its keys was issued before (R16), each cancelled instead of parked when a cancel was
 * requested, as requestInput does. Resolves with the fences whose pause was written, as
 * `taskId:epoch`; the caller learns why the others lost from requestInput's own second look.
 * The rows are locked in id order (withHeldRowsLocked).
 */
export async function requestInputs(
  db: Db,
  writes: readonly InputPauseWrite[],
): Promise<Set<string>> {
  const column = <T>(pick: (write: InputPauseWrite) => T): T[] => writes.map(pick);
  // Keys as a JSON array each: an array of arrays would not unnest row by row. Their order is
  // requestInput's (the requests' own), appended to what was issued before.
  const park = sql<{ id: string; lease_epoch: number }>`
    ${withHeldRowsLocked(sql`
      SELECT u.id, u.epoch, u.requests, u.checkpoint, u.status_message, u.tool_version,
             ARRAY(SELECT jsonb_array_elements_text(u.key_list::jsonb)) AS keys
      FROM unnest(
        ${column((w) => w.fence.taskId)}::text[],
        ${column((w) => w.fence.epoch)}::int[],
        ${column((w) => JSON.stringify(w.requests))}::text[],
        ${column((w) => JSON.stringify(Object.keys(w.requests)))}::text[],
        ${column((w) => (w.checkpoint === null ? null : JSON.stringify(w.checkpoint)))}::text[],
        ${column((w) => w.statusMessage)}::text[],
        ${column((w) => w.toolVersion ?? null)}::int[]
      ) AS u(id, epoch, requests, key_list, checkpoint, status_message, tool_version)`)}
    UPDATE tasks AS t SET
      status = CASE WHEN t.cancel_requested_at IS NULL THEN 'input_required' ELSE 'cancelled' END,
      input_requests = CASE WHEN t.cancel_requested_at IS NULL THEN s.requests::jsonb
                       ELSE '{}'::jsonb END,
      status_message = CASE WHEN t.cancel_requested_at IS NULL THEN s.status_message
                       ELSE ${CANCELLED_BY_REQUEST} END,
      issued_input_keys = t.issued_input_keys || s.keys,
      checkpoint = s.checkpoint::jsonb,
      steps_saved = t.steps_saved + 1,
      tool_version = coalesce(s.tool_version, t.tool_version),
      lease_owner = NULL,
      lease_expires_at = NULL,
      enqueued_at = NULL
    FROM s JOIN locked USING (id)
    WHERE ${HOLDS_EACH_FENCE} AND NOT (t.issued_input_keys && s.keys)
    RETURNING t.id, t.lease_epoch`;
  const { rows } = await executePrepared(db, 'request_inputs', park);
  return new Set(rows.map((row) => `${row.id}:${row.lease_epoch}`));
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

/** An attempt's last write when it ends the task: completeTask, failTask or markCancelled. */
export type FinalWrite =
  | { status: 'completed'; result: JsonObject; statusMessage: string | null }
  | { status: 'failed'; error: TaskError; statusMessage: string | null }
  | { status: 'cancelled'; statusMessage: string | null };

/** One FinalWrite, through the single-row statement of its kind. */
export async function writeFinal(db: Db, fence: Fence, write: FinalWrite): Promise<void> {
  switch (write.status) {
    case 'completed':
      return await completeTask(db, fence, write.result, write.statusMessage);
    case 'failed':
      return await failTask(db, fence, write.error, write.statusMessage);
    case 'cancelled':
      return await markCancelled(db, fence, write.statusMessage);
  }
}

/**
 * Several FinalWrites in one statement, each under its own fence (the same rule as holds()).
 * Resolves with the fences that held, as `taskId:epoch`; the caller turns the others into
 * StaleLeaseError. The rows are locked in id order (withHeldRowsLocked), as every statement
 * that waits for several rows locks them, so none of those can deadlock with this one.
 */
export async function writeFinals(
  db: Db,
  writes: readonly { fence: Fence; write: FinalWrite }[],
): Promise<Set<string>> {
  const column = <T>(pick: (entry: { fence: Fence; write: FinalWrite }) => T): T[] =>
    writes.map(pick);
  const settle = sql<{ id: string; lease_epoch: number }>`
    ${withHeldRowsLocked(sql`
      SELECT s.id, s.epoch, s.status, s.result, s.error, s.status_message
      FROM unnest(
      ${column((e) => e.fence.taskId)}::text[],
      ${column((e) => e.fence.epoch)}::int[],
      ${column((e) => e.write.status)}::text[],
      ${column((e) => (e.write.status === 'completed' ? JSON.stringify(e.write.result) : null))}::text[],
      ${column((e) => (e.write.status === 'failed' ? JSON.stringify(e.write.error) : null))}::text[],
      ${column((e) => e.write.statusMessage)}::text[]
    ) AS s(id, epoch, status, result, error, status_message)`)}
    UPDATE tasks AS t SET
      status = s.status,
      result = CASE WHEN s.status = 'completed' THEN s.result::jsonb ELSE t.result END,
      error = CASE WHEN s.status = 'failed' THEN s.error::jsonb ELSE t.error END,
      status_message = s.status_message,
      lease_owner = NULL,
      lease_expires_at = NULL
    FROM s JOIN locked USING (id)
    WHERE ${HOLDS_EACH_FENCE}
    RETURNING t.id, t.lease_epoch`;
  const { rows } = await executePrepared(db, 'write_finals', settle);
  return new Set(rows.map((row) => `${row.id}:${row.lease_epoch}`));
}

/**
 * An attempt died of an unexpected error: keep the message, give the lease back so a retry can
 * claim; counts one more failure (the retry budget). A pending cancel request takes effect instead.
 * The row is marked enqueued in the same statement: the retry's delayed wake-up follows, and an
 * unheld row with its old mark would let a sweep in between wake it early, cutting the backoff
 * short. Should the wake-up be lost, the sweeper wakes the task once the mark is a grace old.
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
      enqueued_at: sql<Date>`now()`,
      ...cancelIfRequested(),
    })
    .where(holds(fence))
    .returning('failures');
  const [row] = (await executePrepared(db, 'record_attempt_failure', record)).rows;
  if (row === undefined) throw new StaleLeaseError(fence.taskId, fence.epoch);
  return { failures: row.failures };
}
