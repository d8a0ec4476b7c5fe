import { CompiledQuery } from 'kysely';
import { isWellFormedTaskId, type TaskView } from '@mcp-tasks/tasks';
import type { Db } from './database.js';
import { executePrepared } from './prepared-statements.js';
import { TASK_VIEW_COLUMNS, taskViewRowToView, type TaskViewRow } from './task-row.js';

/**
 * The one statement of a poll, written once: building and compiling it with the query builder on
 * every `tasks/get` cost more CPU than the rest of the read, and `SELECT *` parsed the arguments,
 * checkpoint and answers (jsonb of any size) that a snapshot never shows.
 */
const SELECT_VIEW = `SELECT ${TASK_VIEW_COLUMNS.join(', ')} FROM tasks WHERE id = $1 AND tenant = $2 AND principal = $3`;

/**
 * What the owner may see of a task (R14), for `tasks/get`. Missing, foreign and malformed ids all
 * answer `undefined` (R15), and a malformed id never reaches the database.
 */
export async function getTaskViewForPrincipal(
  db: Db,
  tenant: string,
  principal: string,
  taskId: string,
): Promise<TaskView | undefined> {
  if (!isWellFormedTaskId(taskId)) return undefined;
  const query = CompiledQuery.raw(SELECT_VIEW, [taskId, tenant, principal]);
  const { rows } = await executePrepared<TaskViewRow>(db, 'task_view', query);
  const row = rows[0];
  return row === undefined ? undefined : taskViewRowToView(row);
}
