import type { Kysely } from 'kysely';
import { addCountColumn, type StoreMigration } from './online.js';

/**
 * `steps_saved`: how many step outcomes the task has saved (each checkpoint and each input round
 * adds one). A step re-run from the same checkpoint sees the same count, so the worker hands it
 * to the step as `ctx.stepIndex` and builds `ctx.idempotencyKey` from it (docs/adr/0004).
 * Additive with a constant default (no table rewrite); an older worker that does not count leaves
 * it as is, so its steps repeat a key until every worker runs this release.
 */
export const stepsSaved: StoreMigration = {
  transactional: false,
  async up(db: Kysely<unknown>): Promise<void> {
    // Online (issue 25): the CHECK is added NOT VALID and validated after, like 0002's.
    await addCountColumn(db, 'tasks', 'steps_saved', 'tasks_steps_saved_non_negative');
  },
};
