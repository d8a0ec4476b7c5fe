import { createOutbox, type Db, type TaskDispatcher } from '@mcp-tasks/store';
import type { Logger } from '../logger.js';

/** A wake-up the worker sends itself: a retry after backoff, or a task given back at shutdown. */
export type Requeue = (
  taskId: string,
  reason: 'retry' | 'released',
  delayMs: number,
) => Promise<void>;

/**
 * The outbox's requeue (packages/store/src/wake-up/outbox.ts): add the job, then mark the task enqueued,
 * so the sweeper leaves the backoff alone for its enqueue grace.
 */
export function createRequeue(options: { db: Db; queue: TaskDispatcher }): Requeue {
  const outbox = createOutbox({ db: options.db, dispatcher: options.queue });
  return (taskId, reason, delayMs) => outbox.requeue(taskId, reason, delayMs);
}

/**
 * Requeues, and if that fails only says so: the task is durable and unheld, so the sweeper sends
 * it once the enqueue grace has passed. `what` names the wake-up in the warning.
 */
export async function requeueOrLeaveToSweeper(
  requeue: Requeue,
  logger: Logger,
  wakeUp: { taskId: string; reason: 'retry' | 'released'; delayMs: number; what: string },
): Promise<void> {
  await requeue(wakeUp.taskId, wakeUp.reason, wakeUp.delayMs).catch((error: unknown) => {
    logger.warn(
      { err: error, taskId: wakeUp.taskId },
      `could not ${wakeUp.what}; the sweeper will`,
    );
  });
}
