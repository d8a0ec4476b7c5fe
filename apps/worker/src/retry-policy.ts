import { ErrorCode } from '@mcp-tasks/protocol';
import type { TaskError } from '@mcp-tasks/tasks';

/**
 * The one table of infrastructure failures worth retrying later as they are: Postgres SQLSTATEs
 * (connection exceptions, serialization and deadlock losses, operator shutdowns, resource
 * exhaustion) and socket errnos (Postgres or Redis unreachable). Such an error says nothing about
 * the task, so it is not held against it; the wake-up is simply sent again later.
 */
const TRANSIENT_SQLSTATES = new Set([
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '08007',
  '08P01', // connection exception class
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '57014', // query_canceled: createDb's statement_timeout on an overloaded or stuck server
  '53000',
  '53100',
  '53200',
  '53300', // insufficient resources, too many connections
  '57P01',
  '57P02',
  '57P03', // admin/crash shutdown, cannot connect now
]);
const TRANSIENT_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/** Messages of driver errors that carry no code (pg pool, ioredis). */
const TRANSIENT_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Connection is closed/i,
  /Query read timeout/i, // pg's client-side query_timeout (createDb): the server stopped answering
  /Stream isn't writeable/i,
];

export function isTransientInfrastructureError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (TRANSIENT_SQLSTATES.has(code) || TRANSIENT_ERRNOS.has(code))) {
    return true;
  }
  const message = (error as { message?: unknown }).message;
  if (typeof message === 'string' && TRANSIENT_MESSAGES.some((pattern) => pattern.test(message))) {
    return true;
  }
  // AggregateError (e.g. a dual-stack connect that failed on every address).
  const errors = (error as { errors?: unknown }).errors;
  return Array.isArray(errors) && errors.some(isTransientInfrastructureError);
}

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
