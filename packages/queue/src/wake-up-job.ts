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

/**
 * Task ids one job carries at most (ADR 0013): a worker that takes a job with fewer free slots
 * than ids holds the rest as credits until slots free, so this bounds what it holds beyond its
 * concurrency (15) while the job costs BullMQ's ~40 commands once for all of them.
 */
export const MAX_TASKS_PER_JOB = 16;

const taskIdSchema = z.string().refine(isWellFormedTaskId, 'not a task id');

/** One wake-up as the consumer hands it on: the task it names, and why it was sent. */
export const WakeUpJobSchema = z.object({
  taskId: taskIdSchema,
  reason: z.enum(WAKE_UP_REASONS),
});
export type WakeUpJob = z.infer<typeof WakeUpJobSchema>;

/** A job carrying several wake-ups of one reason (a gateway's batch of new tasks). */
export const WakeUpBatchSchema = z.object({
  taskIds: z.array(taskIdSchema).min(1).max(MAX_TASKS_PER_JOB),
  reason: z.enum(WAKE_UP_REASONS),
});
export type WakeUpBatch = z.infer<typeof WakeUpBatchSchema>;

/**
 * A job's payload as wake-ups, validated when dequeued: one (`{ taskId, reason }`, every job
 * before ADR 0013 and every lone wake-up since) or a batch. A payload that fails both is logged
 * and dropped (Postgres still has the task, and the sweeper wakes it again).
 */
export function parseWakeUps(
  data: unknown,
): { ok: true; wakeUps: WakeUpJob[] } | { ok: false; issues: string } {
  const one = WakeUpJobSchema.safeParse(data);
  if (one.success) return { ok: true, wakeUps: [one.data] };
  const batch = WakeUpBatchSchema.safeParse(data);
  if (batch.success) {
    const { taskIds, reason } = batch.data;
    return { ok: true, wakeUps: taskIds.map((taskId) => ({ taskId, reason })) };
  }
  return { ok: false, issues: one.error.message };
}

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
  return `${taskId}.${reason}.${uniqueSuffix()}`;
}

/**
 * A batch job's id: its first task's id, the reason and `batch`, made unique. Never a task id,
 * so every task of a batch is found through its latest-wake-up pointer (task-queue.ts).
 */
export function batchJobIdFor(firstTaskId: string, reason: WakeUpReason): string {
  return `${firstTaskId}.${reason}-batch.${uniqueSuffix()}`;
}

const uniqueSuffix = (): string => `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
