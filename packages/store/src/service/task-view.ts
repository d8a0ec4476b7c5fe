import { CompiledQuery } from 'kysely';
import { isWellFormedTaskId, type TaskView } from '@mcp-tasks/tasks';
import type { Db } from '../db/database.js';
import { executePrepared } from '../db/prepared-statements.js';
import { TASK_VIEW_COLUMNS, taskViewRowToView, type TaskViewRow } from '../rows/task-row.js';

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

/** One poll's key: the task and who asks for it. */
export interface TaskViewKey {
  tenant: string;
  principal: string;
  taskId: string;
}

/**
 * Many polls in ONE statement: the owner check stays in SQL (a foreign id matches no row), and
 * each key, duplicates included, gets its own answer (undefined: not found, R15).
 */
const SELECT_VIEWS = `SELECT ${TASK_VIEW_COLUMNS.map((c) => `t.${c}`).join(', ')}, t.tenant, t.principal
  FROM tasks t JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(id, tenant, principal)
    ON t.id = k.id AND t.tenant = k.tenant AND t.principal = k.principal`;

const keyOf = (tenant: string, principal: string, id: string) =>
  `${tenant}\u0000${principal}\u0000${id}`;

export async function getTaskViewsForPrincipals(
  db: Db,
  keys: readonly TaskViewKey[],
): Promise<(TaskView | undefined)[]> {
  const unique = new Map<string, TaskViewKey>();
  for (const key of keys) {
    if (isWellFormedTaskId(key.taskId))
      unique.set(keyOf(key.tenant, key.principal, key.taskId), key);
  }
  if (unique.size === 0) return keys.map(() => undefined);
  const wanted = [...unique.values()];
  const query = CompiledQuery.raw(SELECT_VIEWS, [
    wanted.map((k) => k.taskId),
    wanted.map((k) => k.tenant),
    wanted.map((k) => k.principal),
  ]);
  const { rows } = await executePrepared<TaskViewRow & { tenant: string; principal: string }>(
    db,
    'task_views',
    query,
  );
  const found = new Map<string, TaskView>();
  for (const row of rows)
    found.set(keyOf(row.tenant, row.principal, row.id), taskViewRowToView(row));
  return keys.map((key) => found.get(keyOf(key.tenant, key.principal, key.taskId)));
}
