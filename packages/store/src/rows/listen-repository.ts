import { isWellFormedTaskId, type TaskOwner, type TaskView } from '@mcp-tasks/tasks';
import { CompiledQuery } from 'kysely';
import type { Db } from '../db/database.js';
import { executePrepared } from '../db/prepared-statements.js';
import { lockInIdOrder } from '../sql/row-locks.js';
import { TASK_VIEW_COLUMNS, taskViewRowToView, type TaskViewRow } from './task-row.js';

/** How long a listen flag lasts unless renewed (MCP_LISTEN_FLAG_TTL_MS's default). */
export const DEFAULT_LISTEN_FLAG_TTL_MS = 600_000;

/** One stream's flags: the owner's tasks among `taskIds`, flagged for `ttlMs` from now. */
export interface ListenFlagRequest {
  owner: TaskOwner;
  taskIds: readonly string[];
  ttlMs?: number;
}

/** A flag that needs writing: active, and not flagged with half of `f.ttl_ms` left or more. */
const FLAG_DUE = `t.status IN ('working', 'input_required')
        AND (t.listened_until IS NULL
             OR t.listened_until < now() + floor(f.ttl_ms / 2) * interval '1 millisecond')`;

/**
 * Every request's flags in ONE statement, whatever their owners: the owner check stays in SQL
 * (a foreign id matches no row). The rows are locked in id order first (sql/row-locks.ts), so
 * this never deadlocks with a worker's shared writes. RETURNING gives each flagged row as this
 * statement left it: the newest committed version (the lock waits for a concurrent writer and
 * re-reads the row), and any change after it waits for this commit and sees the flag.
 */
const FLAG_LISTENED = `WITH f AS (
    SELECT f.id, f.tenant, f.principal, f.ttl_ms
    FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[])
      AS f(id, tenant, principal, ttl_ms)
  ), locked AS MATERIALIZED (
    ${lockInIdOrder({
      columns: 't.id, f.ttl_ms',
      from: 'tasks AS t JOIN f ON t.id = f.id AND t.tenant = f.tenant AND t.principal = f.principal',
      where: FLAG_DUE,
    })}
  )
  UPDATE tasks AS t
   SET listened = true, listened_until = now() + f.ttl_ms * interval '1 millisecond'
  FROM locked AS f
 WHERE t.id = f.id AND ${FLAG_DUE}
RETURNING ${TASK_VIEW_COLUMNS.map((column) => `t.${column}`).join(', ')}, t.tenant, t.principal`;

/**
 * Marks the owner's active tasks among `taskIds` as listened for `ttlMs` from now, so that from
 * this commit on, until then, every client-visible change of them is announced on the change feed
 * (migrations 0007, 0008). Call it after subscribing to the feed and before reading the tasks: a
 * change committed before the flag is in that read, a change committed after it is announced (so
 * the flag must commit before the read starts: a read in the same statement would see a snapshot
 * older than the row it flagged). A stream open longer than `ttlMs` calls it again before the flag
 * lapses; a flag with more than half its time left is not written again. Terminal tasks are
 * skipped: they never change again except for a late cancel request, which is always announced.
 */
export async function flagListenedTasks(
  db: Db,
  owner: TaskOwner,
  taskIds: readonly string[],
  options: { ttlMs?: number } = {},
): Promise<void> {
  await flagListenedTasksOfOwners(db, [{ owner, taskIds, ttlMs: options.ttlMs }]);
}

const keyOf = (owner: TaskOwner, id: string) =>
  `${owner.tenant}\u0000${owner.principal}\u0000${id}`;

/**
 * flagListenedTasks for several streams (of any owners) in one statement: streams opening
 * together on a replica share it. A task named twice keeps the longer lifetime. Answers, per
 * request, the tasks this statement flagged as they are at its commit (a read need not load
 * them again: every later change is announced); a task it did not write (flagged already, or
 * terminal) is not among them.
 */
export async function flagListenedTasksOfOwners(
  db: Db,
  requests: readonly ListenFlagRequest[],
): Promise<TaskView[][]> {
  const longest = new Map<string, { id: string; owner: TaskOwner; ttlMs: number }>();
  for (const { owner, taskIds, ttlMs = DEFAULT_LISTEN_FLAG_TTL_MS } of requests) {
    for (const id of taskIds) {
      if (!isWellFormedTaskId(id)) continue;
      const key = keyOf(owner, id);
      const known = longest.get(key);
      if (known === undefined || known.ttlMs < ttlMs) longest.set(key, { id, owner, ttlMs });
    }
  }
  if (longest.size === 0) return requests.map(() => []);
  const keys = [...longest.values()];
  const query = CompiledQuery.raw(FLAG_LISTENED, [
    keys.map((key) => key.id),
    keys.map((key) => key.owner.tenant),
    keys.map((key) => key.owner.principal),
    keys.map((key) => key.ttlMs),
  ]);
  const { rows } = await executePrepared<TaskViewRow & { tenant: string; principal: string }>(
    db,
    'flag_listened',
    query,
  );
  const flagged = new Map<string, TaskView>();
  for (const row of rows) flagged.set(keyOf(row, row.id), taskViewRowToView(row));
  return requests.map(({ owner, taskIds }) =>
    taskIds.flatMap((id) => flagged.get(keyOf(owner, id)) ?? []),
  );
}
