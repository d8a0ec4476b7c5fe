import { CompiledQuery, sql, type Expression, type SqlBool } from 'kysely';
import { isWellFormedTaskId, type Task } from '@mcp-tasks/tasks';
import type { Db, TaskRow } from '../db/database.js';
import { StaleLeaseError } from '../errors.js';
import { CANCELLED_BY_REQUEST } from '../rows/task-repository.js';
import { executePrepared } from '../db/prepared-statements.js';
import { CLAIMABLE, CLAIM_MANY_WHERE, claimFairText, claimText } from '../sql/lease.js';
import { TASK_ROW_COLUMNS, taskRowToTask } from '../rows/task-row.js';
import type { ClaimTrace } from '../rows/trace-context.js';

// The lease itself: claim, renew, release, and the fence every write of its holder carries (the
// writes themselves are in fenced-task-writes.ts).

/** What a worker carries from claimLease into every write: the task and the epoch it claimed. */
export interface Fence {
  taskId: string;
  epoch: number;
}

/** What the worker needs to know about a task's tool beyond the domain Task (migration 0005); `claimLease` returns it. */
export interface ToolRecord {
  /** The tool version that wrote the checkpoint; null before versions were recorded (read as 1). */
  toolVersion: number | null;
  /** When a worker first claimed the task without having its tool; null if none has. */
  toolMissingSince: Date | null;
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

/**
 * The same rule for a batch: each row of `tasks AS t` against the fence in the columns `id` and
 * `epoch` of a source relation `s` (batched-lease-writes.ts).
 */
export const HOLDS_EACH_FENCE_TEXT = `(t.id = s.id AND t.lease_epoch = s.epoch
    AND t.status = 'working' AND t.lease_owner IS NOT NULL)`;
export const HOLDS_EACH_FENCE = sql.raw<SqlBool>(HOLDS_EACH_FENCE_TEXT);

/**
 * From the statement's own start, not `now()` (the transaction's): a checkpoint written in a
 * step's transaction (step-transaction.ts) renews the lease from the moment it is sent, as the
 * worker's local deadline assumes, not from when the step's transaction began. Outside a
 * transaction the two are the same instant.
 */
export function leaseExpiry(leaseMs: number): Expression<Date> {
  assertLeaseMs(leaseMs);
  return sql<Date>`statement_timestamp() + ${leaseMs}::bigint * interval '1 millisecond'`;
}

function assertLeaseMs(leaseMs: number): void {
  if (!Number.isInteger(leaseMs) || leaseMs <= 0) throw new RangeError(`bad lease ${leaseMs} ms`);
}

/** What a claim gives the worker: the fence for every later write, the task, its tool record. */
export interface Claim {
  fence: Fence;
  task: Task;
  tool: ToolRecord;
  /** Step outcomes the task has saved so far (migration 0012): the index of the step to run. */
  stepsSaved: number;
  /** Where the task's trace continues; null when its create was not traced. */
  trace: ClaimTrace | null;
}

const ROW_COLUMN_LIST = TASK_ROW_COLUMNS.join(', ');
const CLAIM_ONE = claimText('id = $3', ROW_COLUMN_LIST);
const CLAIM_MANY = claimText(CLAIM_MANY_WHERE, ROW_COLUMN_LIST);

function claimOf(row: TaskRow): Claim {
  return {
    fence: { taskId: row.id, epoch: row.lease_epoch },
    task: taskRowToTask(row),
    // Read with the claim so the worker needs no second round trip to check checkpoint versions.
    tool: { toolVersion: row.tool_version, toolMissingSince: row.tool_missing_since },
    stepsSaved: row.steps_saved,
    trace:
      row.trace_context === null
        ? null
        : { context: row.trace_context, lastAttempt: row.trace_last_attempt },
  };
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
): Promise<Claim | null> {
  if (!isWellFormedTaskId(taskId)) return null;
  assertLeaseMs(leaseMs);
  const claim = CompiledQuery.raw(CLAIM_ONE, [workerId, leaseMs, taskId]);
  const [row] = (await executePrepared<TaskRow>(db, 'claim_lease', claim)).rows;
  return row === undefined ? null : claimOf(row);
}

/**
 * claimLease for several tasks in one statement: the claims won, by task id. The rows are
 * locked in id order (CLAIM_MANY_WHERE), as every statement that waits for several rows locks
 * them, so two such batches cannot deadlock each other or the workers' shared writes.
 */
export async function claimLeases(
  db: Db,
  taskIds: readonly string[],
  workerId: string,
  leaseMs: number,
): Promise<Map<string, Claim>> {
  const wellFormed = [...new Set(taskIds)].filter(isWellFormedTaskId);
  const claims = new Map<string, Claim>();
  if (wellFormed.length === 0) return claims;
  assertLeaseMs(leaseMs);
  const claim = CompiledQuery.raw(CLAIM_MANY, [workerId, leaseMs, wellFormed]);
  for (const row of (await executePrepared<TaskRow>(db, 'claim_leases', claim)).rows)
    claims.set(row.id, claimOf(row));
  return claims;
}

const CLAIM_FAIR = claimFairText(ROW_COLUMN_LIST);

/**
 * One claim per wake-up at most, fairly across tenants (CLAIM_FAIR): the claims in the order
 * of `taskIds`, a wake-up's own task first when it won, the fair picks handed to the others in
 * turn; null for a wake-up that found nothing to claim. The task claimed may differ from the one
 * a wake-up named: the worker runs what it claimed.
 */
export async function claimFairly(
  db: Db,
  taskIds: readonly string[],
  workerId: string,
  leaseMs: number,
): Promise<(Claim | null)[]> {
  if (taskIds.length === 0) return [];
  assertLeaseMs(leaseMs);
  // A malformed id names nothing, but its wake-up still counts as a turn to take.
  const named = taskIds.map((taskId) => (isWellFormedTaskId(taskId) ? taskId : ''));
  const claim = CompiledQuery.raw(CLAIM_FAIR, [workerId, leaseMs, named]);
  const won = new Map<string, Claim>();
  for (const row of (await executePrepared<TaskRow>(db, 'claim_fair', claim)).rows)
    won.set(row.id, claimOf(row));
  const claims = taskIds.map((taskId) => {
    const own = won.get(taskId);
    if (own !== undefined) won.delete(taskId);
    return own ?? null;
  });
  const picks = won.values();
  return claims.map((claim) => claim ?? picks.next().value ?? null);
}

/**
 * Whether a claim could take the task now: `working`, and nobody holds a live lease on it. Read
 * after a wake-up claimed nothing: the fair claim passes over rows another writer holds for a
 * moment (SKIP LOCKED: a listen flag, a cancel request, a wake-up mark), so its own task may
 * still be waiting, with no other wake-up to come.
 */
export async function isClaimable(db: Db, taskId: string): Promise<boolean> {
  if (!isWellFormedTaskId(taskId)) return false;
  const read = db
    .selectFrom('tasks')
    .select(sql<number>`1`.as('claimable'))
    .where('id', '=', taskId)
    .where(sql.raw<SqlBool>(CLAIMABLE));
  return (await executePrepared(db, 'is_claimable', read)).rows.length === 1;
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
export function cancelIfRequested() {
  return {
    status: sql<
      'working' | 'cancelled'
    >`CASE WHEN cancel_requested_at IS NULL THEN 'working' ELSE 'cancelled' END`,
    status_message: sql<
      string | null
    >`CASE WHEN cancel_requested_at IS NULL THEN status_message ELSE ${CANCELLED_BY_REQUEST} END`,
  };
}
