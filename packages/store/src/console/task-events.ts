import { sql } from 'kysely';
import type { JsonObject } from '@mcp-tasks/tasks';
import type { Db } from '../db/database.js';
import { eventsOfRow, type TaskEvent } from './history-rows.js';

export type { TaskEvent } from './history-rows.js';

/** History reads are bounded: a task that looped through many input rounds still pages. */
export const MAX_HISTORY_EVENTS = 1_000;

/**
 * A task's events in the order they were written (no owner check: callers scope the task first);
 * `limit` counts stored rows, some of which are two events (history-rows.ts).
 */
export async function listTaskEvents(
  db: Db,
  taskId: string,
  limit = MAX_HISTORY_EVENTS,
): Promise<TaskEvent[]> {
  const rows = await db
    .selectFrom('task_events')
    .selectAll()
    .where('task_id', '=', taskId)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.flatMap((row) =>
    eventsOfRow({
      id: String(row.id),
      taskId: row.task_id,
      at: row.at,
      kind: row.kind,
      actor: row.actor,
      data: row.data,
    }),
  );
}

/** An operator's action, audited in the transaction that performs it. */
export async function recordAudit(
  trx: Db,
  entries: readonly { taskId: string; kind: string; actor: string; data: JsonObject }[],
): Promise<void> {
  if (entries.length === 0) return;
  await trx
    .insertInto('task_events')
    .values(
      entries.map((entry) => ({
        task_id: entry.taskId,
        kind: entry.kind,
        actor: entry.actor,
        data: sql<JsonObject>`${JSON.stringify(entry.data)}::jsonb`,
      })),
    )
    .execute();
}

/** A change seen in the event log: what the console's live list refreshes. */
export interface EventMark {
  id: bigint;
  taskId: string;
  tenant: string | null;
}

/**
 * Events after `afterId`, oldest first, with their task's tenant (null once the task is gone),
 * for the console's live feed. Identity values are handed out before commit, so an event may
 * become visible after a later one: the caller re-reads a window behind its mark (see
 * createEventTail in the gateway) rather than trusting `id > mark` alone.
 */
export async function readEventsAfter(
  db: Db,
  afterId: bigint,
  limit: number,
): Promise<EventMark[]> {
  const rows = await sql<{ id: string; task_id: string; tenant: string | null }>`
    SELECT e.id, e.task_id, t.tenant FROM task_events e LEFT JOIN tasks t ON t.id = e.task_id
    WHERE e.id > ${afterId.toString()}::bigint ORDER BY e.id LIMIT ${limit}
  `.execute(db);
  return rows.rows.map((row) => ({ id: BigInt(row.id), taskId: row.task_id, tenant: row.tenant }));
}

/**
 * The newest event id handed out (0 when there is none): where a fresh tail starts. Read from
 * the identity's sequence: `id` has a BRIN index only (migration 0017), which cannot give a max.
 */
export async function lastEventId(db: Db): Promise<bigint> {
  const row = await sql<{ id: string | null }>`
    SELECT pg_sequence_last_value(pg_get_serial_sequence('task_events', 'id')) AS id
  `.execute(db);
  return BigInt(row.rows[0]?.id ?? '0');
}
