import { sql, type SqlBool } from 'kysely';
import type { InputResponses, JsonObject } from '@mcp-tasks/tasks';
import type { Db } from '../db/database.js';
import { CANCELLED_BY_REQUEST, recordInputResponses } from '../rows/task-repository.js';
import { filterCondition, type OperatorScope, type TaskFilter } from './console-queries.js';
import { recordAudit } from './task-events.js';

/** Tasks one bulk cancel touches at most; the preview says when a filter matches more. */
export const MAX_BULK_CANCEL = 1_000;

/** The tasks a cancel can still change: not ended, no cancel requested yet. */
export const CANCELLABLE: TaskFilter = { statuses: ['working', 'input_required'] };

export type CancelTarget = { taskIds: readonly string[] } | { filter: TaskFilter };

/**
 * tasks/cancel for an operator, on one task or every task a filter matches (at most
 * MAX_BULK_CANCEL, oldest first): the same effect as requestCancel (an unheld task is cancelled
 * at once, a held one gets the request its worker acts on), within the operator's scope, plus one
 * audit event per task, all in one transaction. Rows are locked in id order, as every other
 * multi-row write locks them. Resolves with the ids it changed.
 */
export async function cancelTasksForOperator(
  db: Db,
  scope: OperatorScope,
  target: CancelTarget,
  actor: string,
): Promise<string[]> {
  const filter =
    'filter' in target
      ? { ...target.filter, statuses: cancellableStatuses(target.filter) }
      : CANCELLABLE;
  if ('taskIds' in target && target.taskIds.length === 0) return [];
  return await db.transaction().execute(async (trx) => {
    let pick = trx
      .selectFrom('tasks')
      .select('id')
      .where((eb) => filterCondition(eb, scope, filter))
      .where('cancel_requested_at', 'is', null);
    if ('taskIds' in target) pick = pick.where('id', 'in', [...target.taskIds]);
    const picked = await pick.orderBy('created_at').limit(MAX_BULK_CANCEL).execute();
    const ids = picked.map((row) => row.id).sort();
    if (ids.length === 0) return [];
    const unheld = sql<SqlBool>`(t.status = 'input_required'
      OR (t.status = 'working' AND (t.lease_owner IS NULL OR t.lease_expires_at <= now())))`;
    const updated = await sql<{ id: string; direct: boolean }>`
      WITH locked AS (
        SELECT t.id, ${unheld} AS direct FROM tasks t
        WHERE t.id = ANY(${ids}::text[]) AND t.cancel_requested_at IS NULL
          AND t.status IN ('working', 'input_required')
        ORDER BY t.id FOR UPDATE
      )
      UPDATE tasks t
      SET cancel_requested_at = now(),
          status = CASE WHEN locked.direct THEN 'cancelled' ELSE t.status END,
          status_message = CASE WHEN locked.direct THEN ${CANCELLED_BY_REQUEST} ELSE t.status_message END,
          input_requests = CASE WHEN locked.direct THEN '{}'::jsonb ELSE t.input_requests END,
          lease_owner = CASE WHEN locked.direct THEN NULL ELSE t.lease_owner END,
          lease_expires_at = CASE WHEN locked.direct THEN NULL ELSE t.lease_expires_at END
      FROM locked WHERE t.id = locked.id
      RETURNING t.id, locked.direct
    `.execute(trx);
    const bulk = 'filter' in target;
    await recordAudit(
      trx,
      updated.rows.map((row) => ({
        taskId: row.id,
        kind: 'console_cancel',
        actor,
        data: { bulk, cancelledDirectly: row.direct } satisfies JsonObject,
      })),
    );
    return updated.rows.map((row) => row.id).sort();
  });
}

function cancellableStatuses(filter: TaskFilter): TaskFilter['statuses'] {
  const active = CANCELLABLE.statuses ?? [];
  if (filter.statuses === undefined || filter.statuses.length === 0) return active;
  const kept = filter.statuses.filter((status) => active.includes(status));
  // A filter naming only ended statuses matches nothing cancellable: keep it impossible.
  return kept.length > 0 ? kept : ['__none__' as never];
}

/** The filter a bulk cancel applies, for its preview count. */
export function cancellableFilter(filter: TaskFilter): TaskFilter {
  return { ...filter, statuses: cancellableStatuses(filter) };
}

/**
 * tasks/update for an operator: answers to outstanding keys only (as recordInputResponses),
 * within the scope, audited in the same transaction. `resumed`: the last key was answered and
 * the task is claimable again (the caller wakes it).
 */
export async function answerInputForOperator(
  db: Db,
  scope: OperatorScope,
  taskId: string,
  responses: InputResponses,
  actor: string,
): Promise<{ found: boolean; answered: string[]; resumed: boolean }> {
  return await db.transaction().execute(async (trx) => {
    const task = await trx
      .selectFrom('tasks')
      .select(['tenant', 'principal', 'input_requests'])
      .where('id', '=', taskId)
      .where((eb) => filterCondition(eb, scope, {}))
      .forUpdate()
      .executeTakeFirst();
    if (task === undefined) return { found: false, answered: [], resumed: false };
    const answered = Object.keys(responses).filter((key) => key in task.input_requests);
    const { resumed } = await recordInputResponses(
      trx,
      { tenant: task.tenant, principal: task.principal },
      taskId,
      responses,
    );
    if (answered.length > 0)
      await recordAudit(trx, [{ taskId, kind: 'console_answer', actor, data: { keys: answered } }]);
    return { found: true, answered, resumed };
  });
}
