import { sql } from 'kysely';
import type { TaskError } from '@mcp-tasks/tasks';
import { jsonb, type Db } from './database.js';

export const TASK_EXPIRED_ERROR: TaskError = { code: -32603, message: 'task expired' };
export const TASK_EXPIRED_MESSAGE = 'task expired';
/** Rows one sweeper statement touches unless told otherwise (see the store README for timings). */
export const DEFAULT_SWEEP_BATCH = 1_000;

/**
 * `working` tasks that no worker holds (no lease, or an expired one) and that have no wake-up in
 * the queue we know of: never marked enqueued, or marked longer ago than the grace. A task not yet
 * marked gets the same grace from its last visible change (creation, resume), so the sweeper does
 * not race the create/resume path that is about to enqueue it. Duplicated wake-ups are harmless:
 * claimLease lets one worker in.
 *
 * Two halves, each a range scan on a partial index of its own (migration 0003): unheld tasks by
 * when they became due, and held tasks by lease expiry (live leases all lie past `now`, so that
 * scan stops at the first one). Oldest first.
 */
export async function findOrphans(
  db: Db,
  now: Date,
  options: {
    enqueueGraceMs: number;
    limit: number;
    /** Include tasks whose lease ran out (default true); false right after an outage. */
    expiredLeases?: boolean;
  },
): Promise<string[]> {
  const cutoff = new Date(now.getTime() - options.enqueueGraceMs);
  const { limit } = options;
  // With expired leases left out, the second half selects nothing (and reads nothing).
  const leaseCutoff = options.expiredLeases === false ? new Date(0) : now;
  const result = await sql<{ id: string }>`
    SELECT id FROM (
      (SELECT id, coalesce(enqueued_at, last_updated_at) AS due FROM tasks
        WHERE status = 'working' AND lease_owner IS NULL
          AND coalesce(enqueued_at, last_updated_at) <= ${cutoff}
        ORDER BY coalesce(enqueued_at, last_updated_at) LIMIT ${limit})
      UNION ALL
      (SELECT id, lease_expires_at AS due FROM tasks
        WHERE status = 'working' AND lease_owner IS NOT NULL AND lease_expires_at <= ${leaseCutoff}
          AND coalesce(enqueued_at, last_updated_at) <= ${cutoff}
        ORDER BY lease_expires_at LIMIT ${limit})
    ) AS orphans
    ORDER BY due LIMIT ${limit}
  `.execute(db);
  return result.rows.map((row) => row.id);
}

/**
 * Non-terminal tasks past createdAt + ttlMs fail with a JSON-RPC internal error (R20). A worker
 * still holding one loses its next write (the status is no longer `working`). One bounded batch
 * (the oldest first, rows another transaction has locked skipped): every row fires triggers and a
 * notification, so one unbounded statement over a large backlog outlives any statement timeout
 * and rolls back every time. Call again while it returns a full batch.
 */
export async function expireTasks(
  db: Db,
  now: Date,
  options: { limit: number } = { limit: DEFAULT_SWEEP_BATCH },
): Promise<string[]> {
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
        .orderBy('expires_at')
        .limit(options.limit)
        .forUpdate()
        .skipLocked(),
    )
    .where('status', 'in', ['working', 'input_required'])
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

/**
 * Terminal tasks whose expiry lies more than retentionMs in the past are removed for good; one
 * bounded batch, like expireTasks. Returns how many rows went.
 */
export async function deleteExpiredTasks(
  db: Db,
  now: Date,
  retentionMs: number,
  options: { limit: number } = { limit: DEFAULT_SWEEP_BATCH },
): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionMs);
  const result = await db
    .deleteFrom('tasks')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('tasks')
        .select('id')
        .where('status', 'in', ['completed', 'failed', 'cancelled'])
        .where('expires_at', '<=', cutoff)
        .orderBy('expires_at')
        .limit(options.limit)
        .forUpdate()
        .skipLocked(),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The database clock, which leases and TTLs are measured on; hosts' clocks may disagree. */
export async function databaseNow(db: Db): Promise<Date> {
  const row = await db
    .selectNoFrom((eb) => eb.fn<Date>('now', []).as('now'))
    .executeTakeFirstOrThrow();
  return row.now;
}
