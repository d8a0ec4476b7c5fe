import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Tools from outside the repository (MCP_TOOL_MODULES) evolve on their own schedule:
 * - `tool_version`: the version of the tool that wrote `checkpoint` (NULL: before versions were
 *   recorded, read as version 1), so a newer release can tell an old checkpoint from a current one;
 * - `tool_missing_since`: when a worker first claimed the task without having its tool (or a
 *   new enough version of it), so such a task is left for other workers for a bounded time only.
 * Additive and nullable, so old and new builds can run side by side during a rolling deploy.
 */
export const toolVersion: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      ALTER TABLE tasks
        ADD COLUMN tool_version integer CONSTRAINT tasks_tool_version_positive CHECK (tool_version > 0),
        ADD COLUMN tool_missing_since timestamptz
    `.execute(db);
  },
};
