import { createOutbox, type Db, type TaskDispatcher } from '@mcp-tasks/store';

/** A wake-up the worker sends itself: a retry after backoff, or a task given back at shutdown. */
export type Requeue = (
  taskId: string,
  reason: 'retry' | 'released',
  delayMs: number,
) => Promise<void>;

/**
 * The outbox's requeue (packages/store/src/outbox.ts): add the job, then mark the task enqueued,
 * so the sweeper leaves the backoff alone for its enqueue grace.
 */
export function createRequeue(options: { db: Db; queue: TaskDispatcher }): Requeue {
  const outbox = createOutbox({ db: options.db, dispatcher: options.queue });
  return (taskId, reason, delayMs) => outbox.requeue(taskId, reason, delayMs);
}
