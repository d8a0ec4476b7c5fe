import type { InputResponses, Task, TaskOwner } from '@mcp-tasks/tasks';
import type { Db } from './database.js';
import { waitUntilVisible } from './replica.js';
import {
  DEFAULT_SWEEP_BATCH,
  findOrphans,
  markEnqueued,
  markEnqueuedMany,
} from './sweeper-repository.js';
import {
  createTask,
  recordInputResponses,
  requestCancel,
  type NewTask,
} from './task-repository.js';

/** The queue seen from here: a wake-up that may be lost (Postgres stays the record). */
export interface TaskDispatcher {
  enqueue(taskId: string, reason: 'created' | 'resumed' | 'swept'): Promise<void>;
  /**
   * Wakes a batch of orphans at once (one round trip for the lot); resolves with how many got a
   * new wake-up, the rest having one waiting already. Without it the sweeper wakes one by one.
   */
  enqueueSwept?(taskIds: readonly string[]): Promise<number>;
}

/** One batch of the sweeper's re-dispatch. */
export interface RedispatchResult {
  /** Orphans found (at most the limit). */
  found: number;
  /** Of those, how many got a new wake-up. */
  woken: number;
  /** How many could not be dispatched (they stay orphans for the next sweep). */
  failed: number;
}

export interface TaskService {
  /**
   * ReplicaLagError if the read replica lags past the bound; an enqueue failure is reported, not
   * thrown (the sweeper retries). Repeating a create (same id, owner and operation) returns the
   * existing task and enqueues nothing, unless it was never dispatched (see CreateOptions).
   */
  createAndDispatch(input: NewTask, options?: CreateOptions): Promise<Task>;
  submitInputResponses(
    owner: TaskOwner,
    taskId: string,
    responses: InputResponses,
  ): Promise<{ found: boolean }>;
  cancel(owner: TaskOwner, taskId: string): Promise<{ found: boolean }>;
  /**
   * Wakes one batch of orphans (at most `limit`, default sweepBatchSize) and marks them enqueued.
   * `expiredLeases: false` leaves out tasks whose lease ran out (see findOrphans).
   */
  redispatchOrphans(
    now: Date,
    options?: { limit?: number; expiredLeases?: boolean },
  ): Promise<RedispatchResult>;
}

export interface CreateOptions {
  /**
   * The id is derived from the request (the final MRTR round), so a client's retry names this
   * task again. After a replica-lag timeout such a task is kept, not withdrawn: the retry must get
   * a task that will run, never a handle to one the server cancelled (also when another replica
   * hands it to the retry while this wait is timing out). A repeat dispatches it if nobody has.
   */
  derivedId?: boolean;
}

export interface TaskServiceOptions {
  db: Db;
  /** A streaming replica the gateway reads from; creation waits until it has the row (R11). */
  readDb?: Db;
  visibilityTimeoutMs?: number;
  dispatcher: TaskDispatcher;
  /** Told about an enqueue (or mark) that failed; the task is still durable and the sweeper will find it. */
  onDispatchError?: (taskId: string, error: unknown) => void;
  /** Told about a sweep batch that failed as a whole; default: onDispatchError for each task. */
  onSweepBatchError?: (taskIds: readonly string[], error: unknown) => void;
  enqueueGraceMs?: number;
  /** Orphans handled per redispatchOrphans call unless it names a limit. */
  sweepBatchSize?: number;
}

const DEFAULT_VISIBILITY_TIMEOUT_MS = 2_000;
const DEFAULT_ENQUEUE_GRACE_MS = 30_000;

/**
 * The one home of the outbox sequence "commit -> wait until readable -> enqueue -> mark enqueued".
 * Commit first, so the queue never names a task Postgres does not have; enqueue after the row is
 * readable everywhere, so a worker or a client on any replica finds it; mark last, so a crash in
 * between leaves a task the sweeper re-enqueues (at-least-once wake-ups; claimLease dedupes).
 */
export function createTaskService(options: TaskServiceOptions): TaskService {
  const { db, readDb, dispatcher } = options;
  const visibilityTimeoutMs = options.visibilityTimeoutMs ?? DEFAULT_VISIBILITY_TIMEOUT_MS;
  const enqueueGraceMs = options.enqueueGraceMs ?? DEFAULT_ENQUEUE_GRACE_MS;
  const sweepBatchSize = options.sweepBatchSize ?? DEFAULT_SWEEP_BATCH;

  const dispatch = async (
    taskId: string,
    reason: 'created' | 'resumed' | 'swept',
  ): Promise<boolean> => {
    try {
      await dispatcher.enqueue(taskId, reason);
      await markEnqueued(db, taskId);
      return true;
    } catch (error) {
      options.onDispatchError?.(taskId, error);
      return false;
    }
  };

  return {
    async createAndDispatch(input, createOptions = {}) {
      const derivedId = createOptions.derivedId === true;
      const { task, commitLsn, created, enqueued } = await createTask(db, input);
      if (readDb !== undefined) {
        try {
          await waitUntilVisible(readDb, commitLsn, { timeoutMs: visibilityTimeoutMs });
        } catch (error) {
          // A fresh random id: the client gets an error, not a handle, and no retry can ever name
          // this task, so withdraw it (unheld and never enqueued, so cancelled at once) before the
          // sweeper runs work nobody can see. A derived id is kept: the retry names it again.
          // A repeat of an earlier create keeps its task: that one's handle was already given out.
          if (created && !derivedId) await requestCancel(db, input.owner, task.id);
          throw error;
        }
      }
      // A repeat was dispatched the first time (or the sweeper will see to it): wake nothing twice.
      // A derived-id task whose first create failed its replica wait was never dispatched.
      const neverDispatched = derivedId && !created && !enqueued && task.status === 'working';
      if (created || neverDispatched) await dispatch(task.id, 'created');
      return task;
    },
    async submitInputResponses(owner, taskId, responses) {
      const { found, resumed } = await recordInputResponses(db, owner, taskId, responses);
      if (resumed) await dispatch(taskId, 'resumed');
      return { found };
    },
    async cancel(owner, taskId) {
      // A held task learns of the request from its next renewLease; the change feed tells watchers.
      const { found } = await requestCancel(db, owner, taskId);
      return { found };
    },
    async redispatchOrphans(now, { limit = sweepBatchSize, expiredLeases = true } = {}) {
      const orphans = await findOrphans(db, now, { enqueueGraceMs, limit, expiredLeases });
      const found = orphans.length;
      if (found === 0) return { found, woken: 0, failed: 0 };
      if (dispatcher.enqueueSwept === undefined) {
        let woken = 0;
        for (const taskId of orphans) {
          if (await dispatch(taskId, 'swept')) woken += 1;
        }
        return { found, woken, failed: found - woken };
      }
      try {
        const woken = await dispatcher.enqueueSwept(orphans);
        await markEnqueuedMany(db, orphans);
        return { found, woken, failed: 0 };
      } catch (error) {
        if (options.onSweepBatchError !== undefined) options.onSweepBatchError(orphans, error);
        else for (const taskId of orphans) options.onDispatchError?.(taskId, error);
        return { found, woken: 0, failed: found };
      }
    },
  };
}
