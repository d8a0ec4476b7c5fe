import { sql, type Kysely, type Migration } from 'kysely';

/**
 * `steps_saved`: how many step outcomes the task has saved (each checkpoint and each input round
 * adds one). A step re-run from the same checkpoint sees the same count, so the worker hands it
 * to the step as `ctx.stepIndex` and builds `ctx.idempotencyKey` from it (docs/adr/0004).
 * Additive with a constant default (no table rewrite); an older worker that does not count leaves
 * it as is, so its steps repeat a key until every worker runs this release.
 */
export const stepsSaved: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      ALTER TABLE tasks
        ADD COLUMN steps_saved integer NOT NULL DEFAULT 0
          CONSTRAINT tasks_steps_saved_non_negative CHECK (steps_saved >= 0)
    `.execute(db);
  },
};
