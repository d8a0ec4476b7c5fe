import type { Task, TaskView } from '@mcp-tasks/tasks';
import type { TaskRow } from './database.js';

/** The columns a TaskView is made of: what a poll reads, without arguments, checkpoint or lease. */
export const TASK_VIEW_COLUMNS = [
  'id',
  'status',
  'status_message',
  'created_at',
  'last_updated_at',
  'ttl_ms',
  'poll_interval_ms',
  'input_requests',
  'result',
  'error',
] as const;
export type TaskViewRow = Pick<TaskRow, (typeof TASK_VIEW_COLUMNS)[number]>;

/** The one mapping from a row (snake_case, SQL types) to the domain Task (camelCase). */
export function taskRowToTask(row: TaskRow): Task {
  return {
    id: row.id,
    owner: { tenant: row.tenant, principal: row.principal },
    operation: { method: row.method, toolName: row.tool_name, arguments: row.arguments },
    status: row.status,
    statusMessage: row.status_message,
    createdAt: row.created_at,
    lastUpdatedAt: row.last_updated_at,
    ttlMs: row.ttl_ms === null ? null : Number(row.ttl_ms),
    pollIntervalMs: row.poll_interval_ms,
    result: row.result,
    error: row.error,
    inputRequests: row.input_requests,
    issuedInputKeys: row.issued_input_keys,
    inputResponses: row.input_responses,
    cancelRequestedAt: row.cancel_requested_at,
    checkpoint: row.checkpoint,
    lease:
      row.lease_owner === null || row.lease_expires_at === null
        ? null
        : { owner: row.lease_owner, expiresAt: row.lease_expires_at, epoch: row.lease_epoch },
    leaseEpoch: row.lease_epoch,
    attempts: row.attempts,
    failures: row.failures,
  };
}

/** The same mapping for the columns of a TaskView. */
export function taskViewRowToView(row: TaskViewRow): TaskView {
  return {
    id: row.id,
    status: row.status,
    statusMessage: row.status_message,
    createdAt: row.created_at,
    lastUpdatedAt: row.last_updated_at,
    ttlMs: row.ttl_ms === null ? null : Number(row.ttl_ms),
    pollIntervalMs: row.poll_interval_ms,
    inputRequests: row.input_requests,
    result: row.result,
    error: row.error,
  };
}
