import { ErrorCode } from '@mcp-tasks/protocol';
import type { TaskError } from '@mcp-tasks/tasks';

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export type AttemptDecision =
  { kind: 'retry'; delayMs: number } | { kind: 'fail'; error: TaskError };

/**
 * Checked right after a claim. `failures` also counts takeovers of a lease whose holder vanished
 * (kill -9, OOM, a step that crashes the process), which no error handler ever sees; without this
 * check a task that kills its worker would be re-run every lease period for ever (R19).
 */
export function budgetSpentAtClaim(failures: number, policy: RetryPolicy): TaskError | null {
  if (failures < policy.maxAttempts) return null;
  return {
    code: ErrorCode.InternalError,
    message: `internal error after ${failures} attempts: the task's worker was lost`,
  };
}

/**
 * After an unexpected (non-protocol) error in attempt number `attempts` (counted in Postgres, so
 * the budget survives Redis loss and worker crashes): retry with exponential backoff, or give up
 * with a JSON-RPC internal error once the budget is spent.
 */
export function decideAfterUnexpectedError(attempts: number, policy: RetryPolicy): AttemptDecision {
  if (attempts >= policy.maxAttempts) {
    return {
      kind: 'fail',
      error: {
        code: ErrorCode.InternalError,
        message: `internal error after ${attempts} attempts`,
      },
    };
  }
  const delayMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempts - 1));
  return { kind: 'retry', delayMs };
}
