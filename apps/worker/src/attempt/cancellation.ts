import { getTask, type Db, type TaskChangeListener } from '@mcp-tasks/store';
import type { Task } from '@mcp-tasks/tasks';
import { abortWith, type HeldTasks } from './held-tasks.js';
import type { Logger } from '../logger.js';

// How a cancel request reaches a running attempt, all in this module. The claim reads the flag (a
// cancel requested before it is settled before any step runs); after it, three paths, fastest
// first:
//   1. push: the change feed names a held task; watchForCancellation re-reads it and aborts the step;
//   2. the lease renewal (every LEASE_MS/3 while a step runs) answers the flag and aborts the step;
//   3. each checkpoint answers it too, and the attempt stops at that step boundary.
// The first two abort the step's signal with `cancel`; the third waits until the step loop asks.

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
  /** On the lease channel (TASK_LEASE_CHANGES_CHANNEL): a listen stream's changes never come. */
  listener: TaskChangeListener;
  heldTasks: HeldTasks;
  logger: Logger;
  /** Counts each re-read. */
  onRecheck?: () => void;
}): CancelWatcher {
  const { db, heldTasks, logger } = options;
  const check = (taskId: string): void => {
    const held = heldTasks.get(taskId);
    if (held === undefined) return;
    options.onRecheck?.();
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

/** What one attempt asks about cancellation, and how the renewal and checkpoint paths tell it. */
export interface AttemptCancellation {
  /** A cancel was requested before this attempt claimed the task: settle it before any step. */
  readonly requestedAtClaim: boolean;
  /** The lease keeper's renewal answered that a cancel was requested: stop the running step now. */
  reportedByRenewal(): void;
  /** Records a checkpoint's answer (the checkpoint is also the renewal before the next step). */
  answeredByCheckpoint(answer: { cancelRequested: boolean }): void;
  /** The last checkpoint reported a cancel: stop at this step boundary. */
  requestedAtCheckpoint(): boolean;
}

/** The push path reaches the attempt through `controller` too (HeldTasks aborts it). */
export function trackCancellation(task: Task, controller: AbortController): AttemptCancellation {
  // Each step starts with the cancel flag just read: the claim read it for the first step, each
  // checkpoint reads it for the next.
  let checkpointSaysCancel = false;
  return {
    requestedAtClaim: task.cancelRequestedAt !== null,
    reportedByRenewal: () => abortWith(controller, 'cancel'),
    answeredByCheckpoint(answer) {
      checkpointSaysCancel = answer.cancelRequested;
    },
    requestedAtCheckpoint: () => checkpointSaysCancel,
  };
}
