import { isWellFormedTaskId, type TaskOwner } from '@mcp-tasks/tasks';
import type { Db } from './database.js';

/**
 * Marks the owner's active tasks among `taskIds` as listened, so that from this commit on every
 * client-visible change of them is announced on the change feed (migration 0007). Call it after
 * subscribing to the feed and before reading the tasks: a change committed before the flag is in
 * that read, a change committed after it is announced (so the flag must commit before the read
 * starts: a read in the same statement would see a snapshot older than the row it flagged).
 * Terminal tasks are skipped: they never change again except for a late cancel request, which is
 * always announced.
 */
export async function flagListenedTasks(
  db: Db,
  owner: TaskOwner,
  taskIds: readonly string[],
): Promise<void> {
  const ids = taskIds.filter(isWellFormedTaskId);
  if (ids.length === 0) return;
  await db
    .updateTable('tasks')
    .set({ listened: true })
    .where('id', 'in', ids)
    .where('tenant', '=', owner.tenant)
    .where('principal', '=', owner.principal)
    .where('listened', '=', false)
    .where('status', 'in', ['working', 'input_required'])
    .execute();
}
