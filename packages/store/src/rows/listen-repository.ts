import { isWellFormedTaskId, type TaskOwner } from '@mcp-tasks/tasks';
import { CompiledQuery } from 'kysely';
import type { Db } from '../db/database.js';
import { executePrepared } from '../db/prepared-statements.js';

/** How long a listen flag lasts unless renewed (MCP_LISTEN_FLAG_TTL_MS's default). */
export const DEFAULT_LISTEN_FLAG_TTL_MS = 600_000;

/** One stream's flags: the owner's tasks among `taskIds`, flagged for `ttlMs` from now. */
export interface ListenFlagRequest {
  owner: TaskOwner;
  taskIds: readonly string[];
  ttlMs?: number;
}

/**
 * Every request's flags in ONE statement, whatever their owners: the owner check stays in SQL
 * (a foreign id matches no row). The keys go in id order, so two such statements lock shared
 * rows in the same order.
 */
const FLAG_LISTENED = `UPDATE tasks AS t
   SET listened = true, listened_until = now() + f.ttl_ms * interval '1 millisecond'
  FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[]) AS f(id, tenant, principal, ttl_ms)
 WHERE t.id = f.id AND t.tenant = f.tenant AND t.principal = f.principal
   AND t.status IN ('working', 'input_required')
   AND (t.listened_until IS NULL
        OR t.listened_until < now() + floor(f.ttl_ms / 2) * interval '1 millisecond')`;

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

/**
 * flagListenedTasks for several streams (of any owners) in one statement: streams opening
 * together on a replica share it. A task named twice keeps the longer lifetime.
 */
export async function flagListenedTasksOfOwners(
  db: Db,
  requests: readonly ListenFlagRequest[],
): Promise<void> {
  const longest = new Map<string, { id: string; owner: TaskOwner; ttlMs: number }>();
  for (const { owner, taskIds, ttlMs = DEFAULT_LISTEN_FLAG_TTL_MS } of requests) {
    for (const id of taskIds) {
      if (!isWellFormedTaskId(id)) continue;
      const key = `${owner.tenant}\u0000${owner.principal}\u0000${id}`;
      const known = longest.get(key);
      if (known === undefined || known.ttlMs < ttlMs) longest.set(key, { id, owner, ttlMs });
    }
  }
  if (longest.size === 0) return;
  const keys = [...longest.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const query = CompiledQuery.raw(FLAG_LISTENED, [
    keys.map((key) => key.id),
    keys.map((key) => key.owner.tenant),
    keys.map((key) => key.owner.principal),
    keys.map((key) => key.ttlMs),
  ]);
  await executePrepared(db, 'flag_listened', query);
}
