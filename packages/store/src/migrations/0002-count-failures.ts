import type { Kysely } from 'kysely';
import { addCountColumn, type StoreMigration } from './online.js';

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
    await addCountColumn(db, 'tasks', 'failures', 'tasks_failures_non_negative');
  },
};
