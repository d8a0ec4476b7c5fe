import { sql, type Kysely } from 'kysely';
import { hasConstraint, inTransaction, validateConstraint, type StoreMigration } from './online.js';

/**
 * `attempts` counts claims, and a task is claimed again after every input round, so it cannot
 * be the retry budget. `failures` counts only attempts that ended abnormally: an unexpected error
 * (recordAttemptFailure) or a worker that vanished (a claim that takes over an expired lease).
 * Additive with a default, so a rolling deploy can run old and new builds side by side.
 * Online (issue 25): the column and its CHECK, NOT VALID, in one instant transaction; the rows
 * already there are then checked under a lock that lets reads and writes go on.
 */
export const countFailures: StoreMigration = {
  transactional: false,
  async up(db: Kysely<unknown>): Promise<void> {
    if (!(await hasConstraint(db, 'tasks', 'tasks_failures_non_negative')))
      await inTransaction(db, async (trx) => {
        await sql`
          ALTER TABLE tasks
            ADD COLUMN failures integer NOT NULL DEFAULT 0,
            ADD CONSTRAINT tasks_failures_non_negative CHECK (failures >= 0) NOT VALID
        `.execute(trx);
      });
    await validateConstraint(db, 'tasks', 'tasks_failures_non_negative');
  },
};
