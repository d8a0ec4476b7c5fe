import { randomBytes } from 'node:crypto';
import { isWellFormedTaskId } from '@mcp-tasks/tasks';
import { z } from 'zod';

/** The one BullMQ queue: wake-ups for tasks. Postgres holds every fact; a job only says "look at this task". */
export const TASK_QUEUE_NAME = 'mcp-tasks-run';
/** The job name inside the queue (one job kind today). */
export const WAKE_UP_JOB_NAME = 'run-task';
/** BullMQ's key prefix when the deployment names none (REDIS_PREFIX). */
export const DEFAULT_QUEUE_PREFIX = 'mcp-tasks';

/**
 * Why a wake-up was sent: `created` and `resumed` by the task service, `swept` by the sweeper,
 * `retry` (delayed, after an unexpected error) and `released` (a worker shutting down gave the
 * task back) by a worker.
 */
export const WAKE_UP_REASONS = ['created', 'resumed', 'swept', 'retry', 'released'] as const;
export type WakeUpReason = (typeof WAKE_UP_REASONS)[number];

/** Validated when dequeued: a payload that fails is logged and dropped (Postgres still has the task). */
export const WakeUpJobSchema = z.object({
  taskId: z.string().refine(isWellFormedTaskId, 'not a task id'),
  reason: z.enum(WAKE_UP_REASONS),
});
export type WakeUpJob = z.infer<typeof WakeUpJobSchema>;

/**
 * The job id, BullMQ's idempotency key. `created` uses the bare task id, so a repeated create
 * wake-up adds nothing. Every later wake-up gets an id of its own: a resume may be sent while
 * the job that parked the task is still active (it returns just after requestInput commits), and
 * a shared id would be deduplicated into that finishing job and lost. Duplicate wake-ups are
 * harmless, because claimLease in Postgres lets exactly one worker in and the others ack as a
 * no-op. Task ids are base64url, so ids never hold ':' (which BullMQ forbids).
 */
export function jobIdFor(taskId: string, reason: WakeUpReason): string {
  if (reason === 'created') return taskId;
  return `${taskId}.${reason}.${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}
