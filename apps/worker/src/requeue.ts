import type { TaskQueue } from '@mcp-tasks/queue';
import { markEnqueued, type Db } from '@mcp-tasks/store';

/** A wake-up the worker sends itself: a retry after backoff, or a task given back at shutdown. */
export type Requeue = (
  taskId: string,
  reason: 'retry' | 'released',
  delayMs: number,
) => Promise<void>;

/**
 * The same outbox step as the task service's dispatch: add the job, then mark the task enqueued.
 * Without the mark the sweeper sees a stale `enqueued_at` on an unheld task, calls it orphaned at
 * once and wakes it early, which defeats the backoff. The mark only holds the sweeper off for its
 * enqueue grace, so a delay must not exceed that grace (env.ts caps RETRY_MAX_DELAY_MS to it).
 */
export function createRequeue(options: { db: Db; queue: TaskQueue }): Requeue {
  return async (taskId, reason, delayMs) => {
    await options.queue.enqueue(taskId, reason, { delayMs });
    await markEnqueued(options.db, taskId);
  };
}
