import type { TaskError } from '@mcp-tasks/tasks';
import { jsonb, type Db } from '../db/database.js';
import { findOrphansStatement } from '../sql/sweeper.js';

export const TASK_EXPIRED_ERROR: TaskError = { code: -32603, message: 'task expired' };
export const TASK_EXPIRED_MESSAGE = 'task expired';
/** Rows one sweeper statement touches unless told otherwise (see the store README for timings). */
export const DEFAULT_SWEEP_BATCH = 1_000;

/**
 * `working` tasks that no worker holds (no lease, or an expired one) and that have no wake-up in
 * the queue we know of: never marked enqueued, or marked longer ago than the grace. A task not yet
 * marked gets the same grace from its last visible change (creation, resume), so the sweeper does
 * not race the create/resume path that is about to wake it. Duplicated wake-ups are harmless:
 * claimLease lets one worker in.
 *
 * Two halves, each on a partial index of its own (migration 0022): unheld tasks, a range scan on
 * `unheld_due_at` (the trigger's copy of `coalesce(enqueued_at, last_updated_at)` while a task is
 * unheld); held tasks, every one of them read and filtered on lease expiry. The held rows are
 * the tasks in flight, at most every worker's concurrency. Neither index names a column a held
 * task's renewal or checkpoint changes, so those updates can be HOT
 * (docs/adr/0010-tasks-update-in-place.md). Oldest first.
 */
export async function findOrphans(
  db: Db,
  now: Date,
  options: {
    wakeUpGraceMs: number;
    limit: number;
    /** Include tasks whose lease ran out (default true); false right after an outage. */
    expiredLeases?: boolean;
  },
): Promise<string[]> {
  const cutoff = new Date(now.getTime() - options.wakeUpGraceMs);
  const { limit } = options;
  // With expired leases left out, the second half is false before it reads a row.
  const expiredLeases = options.expiredLeases !== false;
  const result = await findOrphansStatement({ cutoff, limit, expiredLeases, now }).execute(db);
  return result.rows.map((row) => row.id);
}

/**
 * One bulk batch of the sweeper: how many rows it handled, and the greatest `expires_at` among
 * them, where the next batch of the same drain may start (`from`).
 */
export interface SweepBatch {
  count: number;
  reached: Date | undefined;
}

/**
 * Where a drain of the backlog starts its next batch. Each batch walks its index (by
 * `expires_at`) from `from` on, not from the start: the entries of the rows the batches before it
 * changed stay in the index until vacuum, and while any older snapshot is open (a long read, a
 * standby's feedback) they cannot even be marked dead, so a walk from the start would read every
 * one of them again, batch after batch, and the drain would slow down with its own progress.
 * A row skipped as locked behind `from` waits for the next drain (the next sweep starts afresh).
 */
const reachedOf = (rows: readonly { expires_at: Date | null }[]): Date | undefined =>
  rows.reduce<Date | undefined>(
    (max, row) =>
      row.expires_at !== null && (max === undefined || row.expires_at > max) ? row.expires_at : max,
    undefined,
  );

/**
 * Non-terminal tasks past createdAt + ttlMs fail with a JSON-RPC internal error (R20). A worker
 * still holding one loses its next write (the status is no longer `working`). One bounded batch
 * (the oldest first, rows another transaction has locked skipped): every row fires triggers and a
 * notification, so one unbounded statement over a large backlog outlives any statement timeout
 * and rolls back every time. Call again while it returns a full batch, passing `from` the last
 * batch's `reached`.
 */
export async function expireTaskBatch(
  db: Db,
  now: Date,
  options: { limit: number; from?: Date },
): Promise<SweepBatch & { ids: string[] }> {
  const rows = await db
    .updateTable('tasks')
    .set({
      status: 'failed',
      error: jsonb(TASK_EXPIRED_ERROR),
      status_message: TASK_EXPIRED_MESSAGE,
      input_requests: jsonb({}),
      lease_owner: null,
      lease_expires_at: null,
    })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('tasks')
        .select('id')
        .where('status', 'in', ['working', 'input_required'])
        .where('expires_at', '<=', now)
        .$if(options.from !== undefined, (qb) => qb.where('expires_at', '>=', options.from!))
        .orderBy('expires_at')
        .limit(options.limit)
        .forUpdate()
        .skipLocked(),
    )
    .where('status', 'in', ['working', 'input_required'])
    .returning(['id', 'expires_at'])
    .execute();
  return { ids: rows.map((row) => row.id), count: rows.length, reached: reachedOf(rows) };
}

/** expireTaskBatch from the start of the backlog; the ids it failed. */
export async function expireTasks(
  db: Db,
  now: Date,
  options: { limit: number } = { limit: DEFAULT_SWEEP_BATCH },
): Promise<string[]> {
  return (await expireTaskBatch(db, now, options)).ids;
}

/**
 * Terminal tasks whose expiry lies more than retentionMs in the past are removed for good; one
 * bounded batch, like expireTaskBatch (and, like it, resumable `from` the last batch's `reached`).
 */
export async function deleteExpiredTaskBatch(
  db: Db,
  now: Date,
  retentionMs: number,
  options: { limit: number; from?: Date },
): Promise<SweepBatch> {
  const cutoff = new Date(now.getTime() - retentionMs);
  const rows = await db
    .deleteFrom('tasks')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('tasks')
        .select('id')
        .where('status', 'in', ['completed', 'failed', 'cancelled'])
        .where('expires_at', '<=', cutoff)
        .$if(options.from !== undefined, (qb) => qb.where('expires_at', '>=', options.from!))
        .orderBy('expires_at')
        .limit(options.limit)
        .forUpdate()
        .skipLocked(),
    )
    .returning('expires_at')
    .execute();
  return { count: rows.length, reached: reachedOf(rows) };
}

/** deleteExpiredTaskBatch from the start of the backlog; how many rows went. */
export async function deleteExpiredTasks(
  db: Db,
  now: Date,
  retentionMs: number,
  options: { limit: number } = { limit: DEFAULT_SWEEP_BATCH },
): Promise<number> {
  return (await deleteExpiredTaskBatch(db, now, retentionMs, options)).count;
}

/** The database clock, which leases and TTLs are measured on; hosts' clocks may disagree. */
export async function databaseNow(db: Db): Promise<Date> {
  const row = await db
    .selectNoFrom((eb) => eb.fn<Date>('now', []).as('now'))
    .executeTakeFirstOrThrow();
  return row.now;
}
