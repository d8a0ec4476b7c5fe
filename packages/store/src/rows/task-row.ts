import type { Task, TaskView } from '@mcp-tasks/tasks';
import type { TaskRow, TasksTable } from '../db/database.js';

/**
 * Every column of `tasks`, for statements that must name them (prepared ones: see
 * prepared-statements.ts). The record makes the compiler refuse a column added to TasksTable
 * and forgotten here.
 */
const ROW_COLUMNS: Record<keyof TasksTable, true> = {
  id: true,
  tenant: true,
  principal: true,
  method: true,
  tool_name: true,
  arguments: true,
  status: true,
  status_message: true,
  created_at: true,
  last_updated_at: true,
  ttl_ms: true,
  poll_interval_ms: true,
  expires_at: true,
  result: true,
  error: true,
  input_requests: true,
  issued_input_keys: true,
  input_responses: true,
  cancel_requested_at: true,
  checkpoint: true,
  lease_owner: true,
  lease_expires_at: true,
  lease_epoch: true,
  attempts: true,
  failures: true,
  last_attempt_error: true,
  enqueued_at: true,
  tool_version: true,
  tool_missing_since: true,
  listened: true,
  listened_until: true,
  steps_saved: true,
  trace_context: true,
  trace_last_attempt: true,
};
export const TASK_ROW_COLUMNS = Object.keys(ROW_COLUMNS) as (keyof TasksTable)[];

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
