import { sql, type Kysely, type Migration } from 'kysely';

/**
 * `attempts` counts claims, and a task is claimed again after every input round, so it cannot
 * be the retry budget. `failures` counts only attempts that ended abnormally: an unexpected error
 * (recordAttemptFailure) or a worker that vanished (a claim that takes over an expired lease).
 * Additive with a default, so a rolling deploy can run old and new builds side by side.
 */
export const countFailures: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      ALTER TABLE tasks
        ADD COLUMN failures integer NOT NULL DEFAULT 0
        CONSTRAINT tasks_failures_non_negative CHECK (failures >= 0)
    `.execute(db);
  },
};
