import { createOutbox, type Db, type WakeUpQueue } from '@mcp-tasks/store';
import type { Logger } from '../logger.js';

/** A wake-up the worker sends itself: a retry after backoff, or a task given back at shutdown. */
export type WakeAgain = (
  taskId: string,
  reason: 'retry' | 'released',
  delayMs: number,
  /**
   * Mark the task enqueued (default true). A wake-up sent again within moments needs no mark (a
   * sweep meanwhile would only add a harmless second wake-up), and one for a row another writer
   * holds must not wait for that writer to mark it.
   */
  options?: { mark?: boolean },
) => Promise<void>;

/**
 * The outbox's wakeAgain (packages/store/src/wake-up/outbox.ts): add the job, then mark the task enqueued,
 * so the sweeper leaves the backoff alone for its wake-up grace.
 */
export function createWakeAgain(options: { db: Db; queue: WakeUpQueue }): WakeAgain {
  const outbox = createOutbox({ db: options.db, wakeUpQueue: options.queue });
  return (taskId, reason, delayMs, { mark = true } = {}) =>
    mark
      ? outbox.wakeAgain(taskId, reason, delayMs)
      : options.queue.wake(taskId, reason, { delayMs });
}

/**
 * Wakes again, and if that fails only says so: the task is durable and unheld, so the sweeper sends
 * it once the wake-up grace has passed. `what` names the wake-up in the warning.
 */
export async function wakeAgainOrLeaveToSweeper(
  wakeAgain: WakeAgain,
  logger: Logger,
  wakeUp: { taskId: string; reason: 'retry' | 'released'; delayMs: number; what: string },
): Promise<void> {
  await wakeAgain(wakeUp.taskId, wakeUp.reason, wakeUp.delayMs).catch((error: unknown) => {
    logger.warn(
      { err: error, taskId: wakeUp.taskId },
      `could not ${wakeUp.what}; the sweeper will`,
    );
  });
}
