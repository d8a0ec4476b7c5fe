import { CompiledQuery, sql, type ControlledTransaction } from 'kysely';
import type { Database, Db } from '../db/database.js';
import { StaleLeaseError } from '../errors.js';
import { holds, type Fence } from './lease.js';

// A step's own database writes, committed with the step's outcome under the lease's fence
// (docs/adr/0005-exactly-once-step-effects.md). The fence is checked twice: once when the
// transaction opens, so a stale worker stops before the tool does any work; and again by the
// outcome's own write (saveCheckpoint, requestInput, writeFinal: each `WHERE holds(fence)`) in
// the same transaction, which is the check that counts. That UPDATE locks the task row until
// COMMIT, so a takeover's claim either ran before it (the UPDATE matches nothing, everything
// rolls back) or waits for the commit and then reads the new checkpoint. No lock is taken when
// the transaction opens: one held through the tool's work would stall the lease's renewals and,
// for a frozen worker, every takeover of the task.

/** A transaction a step shares with its outcome's write; the outcome is written on `trx`. */
export type StepTransactionHandle = ControlledTransaction<Database>;

/** The rows a statement of the tool answered, and how many it changed. */
export interface StepQueryResult<R> {
  rows: R[];
  rowCount: number;
}

export interface BeginStepTransactionOptions {
  /**
   * How long the transaction may sit idle (the worker frozen, cut off, or the tool waiting on
   * something else) before Postgres ends the session and rolls it back: a frozen worker that
   * thaws finds its connection gone and commits nothing, and the row locks its tool took are
   * freed for the worker that took the task over.
   */
  idleTimeoutMs: number;
}

/**
 * Opens a step's transaction on `db`'s pool, after checking that `fence` still holds. Throws
 * StaleLeaseError (nothing opened) when it does not: the step is then a lost lease.
 */
export async function beginStepTransaction(
  db: Db,
  fence: Fence,
  options: BeginStepTransactionOptions,
): Promise<StepTransactionHandle> {
  const { idleTimeoutMs } = options;
  if (!Number.isInteger(idleTimeoutMs) || idleTimeoutMs <= 0)
    throw new RangeError(`bad idle timeout ${idleTimeoutMs} ms`);
  const trx = await db.startTransaction().execute();
  try {
    // One round trip: the fence, and the idle bound set for this transaction only.
    const held = await trx
      .selectFrom('tasks')
      .select(
        sql<string>`set_config('idle_in_transaction_session_timeout', ${String(idleTimeoutMs)}, true)`.as(
          'idle_timeout',
        ),
      )
      .where(holds(fence))
      .executeTakeFirst();
    if (held === undefined) throw new StaleLeaseError(fence.taskId, fence.epoch);
    return trx;
  } catch (error) {
    await rollbackStepTransaction(trx);
    throw error;
  }
}

/** Runs one of the tool's own statements (text with $1, $2… and their values) in the step's transaction. */
export async function queryInStepTransaction<R>(
  trx: StepTransactionHandle,
  text: string,
  values: readonly unknown[] = [],
): Promise<StepQueryResult<R>> {
  const result = await trx.executeQuery<R>(CompiledQuery.raw(text, [...values]));
  return {
    rows: result.rows,
    rowCount: Number(result.numAffectedRows ?? BigInt(result.rows.length)),
  };
}

/** Commits the step's writes and its outcome together. */
export async function commitStepTransaction(trx: StepTransactionHandle): Promise<void> {
  await trx.commit().execute();
}

/**
 * Rolls the step's writes back. Never throws: a rollback that fails (the connection died, the
 * idle bound ended the session) leaves nothing committed either, and the connection is released.
 */
export async function rollbackStepTransaction(trx: StepTransactionHandle): Promise<void> {
  if (trx.isCommitted || trx.isRolledBack) return;
  await trx
    .rollback()
    .execute()
    .catch(() => undefined);
}
