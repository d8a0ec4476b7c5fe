import { isWellFormedTaskId, type TaskOwner } from '@mcp-tasks/tasks';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';

/** How long a listen flag lasts unless renewed (MCP_LISTEN_FLAG_TTL_MS's default). */
export const DEFAULT_LISTEN_FLAG_TTL_MS = 600_000;

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
  const ids = taskIds.filter(isWellFormedTaskId);
  if (ids.length === 0) return;
  const ttlMs = options.ttlMs ?? DEFAULT_LISTEN_FLAG_TTL_MS;
  const until = sql<Date>`now() + ${ttlMs} * interval '1 millisecond'`;
  const renewAfter = sql<Date>`now() + ${Math.floor(ttlMs / 2)} * interval '1 millisecond'`;
  await db
    .updateTable('tasks')
    .set({ listened: true, listened_until: until })
    .where('id', 'in', ids)
    .where('tenant', '=', owner.tenant)
    .where('principal', '=', owner.principal)
    .where((eb) => eb.or([eb('listened_until', 'is', null), eb('listened_until', '<', renewAfter)]))
    .where('status', 'in', ['working', 'input_required'])
    .execute();
}
