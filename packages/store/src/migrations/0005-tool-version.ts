import { sql, type Kysely } from 'kysely';
import { hasConstraint, inTransaction, validateConstraint, type StoreMigration } from './online.js';

/**
 * Tools from outside the repository (MCP_TOOL_MODULES) evolve on their own schedule:
 * - `tool_version`: the version of the tool that wrote `checkpoint` (NULL: before versions were
 *   recorded, read as version 1), so a newer release can tell an old checkpoint from a current one;
 * - `tool_missing_since`: when a worker first claimed the task without having its tool (or a
 *   new enough version of it), so such a task is left for other workers for a bounded time only.
 * Additive and nullable, so old and new builds can run side by side during a rolling deploy.
 * Online (issue 25): the CHECK is added NOT VALID and validated after, like 0002's.
 */
export const toolVersion: StoreMigration = {
  transactional: false,
  async up(db: Kysely<unknown>): Promise<void> {
    if (!(await hasConstraint(db, 'tasks', 'tasks_tool_version_positive')))
      await inTransaction(db, async (trx) => {
        await sql`
          ALTER TABLE tasks
            ADD COLUMN tool_version integer,
            ADD COLUMN tool_missing_since timestamptz,
            ADD CONSTRAINT tasks_tool_version_positive CHECK (tool_version > 0) NOT VALID
        `.execute(trx);
      });
    await validateConstraint(db, 'tasks', 'tasks_tool_version_positive');
  },
};
