import type { Task } from '@mcp-tasks/tasks';
import type { TaskRow } from './database.js';

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
