import { ErrorCode } from '@mcp-tasks/protocol';

/**
 * What the gateway answers for an id the caller may not see (apps/gateway/src/mcp/tasks.ts,
 * `taskNotFound`, R15): the same error for unknown, expired and foreign ids, so a probe cannot
 * tell "exists in another tenant" from "never existed". A probe must get exactly this.
 */
export const UNKNOWN_TASK_ERROR = {
  code: ErrorCode.InvalidParams,
  message: 'Task not found or expired',
} as const;
