import { sql } from 'kysely';
import type { JsonValue } from '@mcp-tasks/tasks';
import { jsonb, type Db } from '../db/database.js';
import { StaleLeaseError } from '../errors.js';
import { holds, type Fence } from './lease.js';

/**
 * Notes that the holder lacks the task's tool, keeping the first such moment, and answers how long
 * ago that was by the database clock (every worker measures the bound on the same clock).
 */
export async function recordToolMissing(db: Db, fence: Fence): Promise<{ missingForMs: number }> {
  const row = await db
    .updateTable('tasks')
    .set({ tool_missing_since: sql<Date>`coalesce(tool_missing_since, now())` })
    .where(holds(fence))
    .returning(
      sql<string>`floor(extract(epoch FROM now() - tool_missing_since) * 1000)`.as(
        'missing_for_ms',
      ),
    )
    .executeTakeFirst();
  if (row === undefined) throw new StaleLeaseError(fence.taskId, fence.epoch);
  return { missingForMs: Number(row.missing_for_ms) };
}

/**
 * Records the tool version the holder runs the task with, and forgets an earlier "tool missing"
 * mark; with `checkpoint`, also saves a checkpoint the tool just migrated to that version.
 */
export async function recordToolVersion(
  db: Db,
  fence: Fence,
  toolVersion: number,
  checkpoint?: JsonValue,
): Promise<void> {
  const result = await db
    .updateTable('tasks')
    .set({
      tool_version: toolVersion,
      tool_missing_since: null,
      ...(checkpoint === undefined
        ? {}
        : { checkpoint: checkpoint === null ? null : jsonb(checkpoint) }),
    })
    .where(holds(fence))
    .executeTakeFirst();
  if (result.numUpdatedRows !== 1n) throw new StaleLeaseError(fence.taskId, fence.epoch);
}
