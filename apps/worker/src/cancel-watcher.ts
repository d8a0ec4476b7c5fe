import { getTask, type Db, type TaskChangeListener } from '@mcp-tasks/store';
import type { HeldTasks } from './held-tasks.js';
import type { Logger } from './logger.js';

export interface CancelWatcher {
  /** Re-reads every held task (after the listener reconnected and may have missed notifications). */
  recheckAll(): void;
  stop(): void;
}

/**
 * Push path for cancellation: the change feed names a task, and if this worker holds it, the row
 * is re-read. A cancel request aborts the running step now instead of at the next lease renewal;
 * a task that moved on without us (expired, claimed by someone else) aborts as a lost lease.
 */
export function watchForCancellation(options: {
  db: Db;
  listener: TaskChangeListener;
  heldTasks: HeldTasks;
  logger: Logger;
}): CancelWatcher {
  const { db, heldTasks, logger } = options;
  const check = (taskId: string): void => {
    const held = heldTasks.get(taskId);
    if (held === undefined) return;
    getTask(db, taskId).then(
      (task) => {
        if (heldTasks.get(taskId) !== held) return;
        if (
          task === undefined ||
          task.status !== 'working' ||
          task.leaseEpoch !== held.fence.epoch
        ) {
          heldTasks.abort(taskId, 'lease lost');
        } else if (task.cancelRequestedAt !== null) {
          heldTasks.abort(taskId, 'cancel');
        }
      },
      (error: unknown) => logger.warn({ err: error, taskId }, 'could not re-read a changed task'),
    );
  };
  const unsubscribe = options.listener.subscribe(check);
  return {
    recheckAll: () => heldTasks.ids().forEach(check),
    stop: unsubscribe,
  };
}
