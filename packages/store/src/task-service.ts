import type { InputResponses, Task, TaskOwner } from '@mcp-tasks/tasks';
import type { Db } from './database.js';
import { createNaturalBatcher, type BatchOutcome } from './natural-batcher.js';
import { createReplicaWaiter } from './replica.js';
import { DEFAULT_SWEEP_BATCH, findOrphans, markEnqueuedMany } from './sweeper-repository.js';
import {
  createTasks,
  recordInputResponses,
  requestCancel,
  type CreatedTask,
  type NewTask,
} from './task-repository.js';

/** The queue seen from here: a wake-up that may be lost (Postgres stays the record). */
export interface TaskDispatcher {
  enqueue(taskId: string, reason: 'created' | 'resumed' | 'swept'): Promise<void>;
  /**
   * Wakes a batch of new tasks at once (one round trip for the lot). Without it the service
   * wakes them one by one. Must be idempotent per task id, like `enqueue(id, 'created')`.
   */
  enqueueCreated?(taskIds: readonly string[]): Promise<void>;
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
  /** Creates inserted (and enqueued) together at most; default 256. */
  createBatchSize?: number;
}

const DEFAULT_VISIBILITY_TIMEOUT_MS = 2_000;
const DEFAULT_ENQUEUE_GRACE_MS = 30_000;
const DEFAULT_CREATE_BATCH = 256;

/**
 * The one home of the outbox sequence "commit -> wait until readable -> enqueue". Commit first,
 * so the queue never names a task Postgres does not have; enqueue after the row is readable
 * everywhere, so a worker or a client on any replica finds it. The outbox needs no mark after a
 * create or a resume: the row itself, `working`, unheld and last changed more than the enqueue
 * grace ago, is what the sweeper re-dispatches (findOrphans), so a crash or a lost enqueue between
 * commit and wake-up is recovered from the row alone, and a wake-up delivered in time is claimed
 * (and so held) long before the grace runs out. At-least-once wake-ups; claimLease dedupes.
 *
 * Creates are batched naturally (natural-batcher.ts): those that arrive while an INSERT is in
 * flight go in the next one, one statement for all, and likewise their replica wait (one poll)
 * and their wake-ups (one addBulk). Each caller still gets only its own outcome, after its own
 * row committed and is readable.
 */
export function createTaskService(options: TaskServiceOptions): TaskService {
  const { db, readDb, dispatcher } = options;
  const visibilityTimeoutMs = options.visibilityTimeoutMs ?? DEFAULT_VISIBILITY_TIMEOUT_MS;
  const enqueueGraceMs = options.enqueueGraceMs ?? DEFAULT_ENQUEUE_GRACE_MS;
  const sweepBatchSize = options.sweepBatchSize ?? DEFAULT_SWEEP_BATCH;
  const maxBatchSize = options.createBatchSize ?? DEFAULT_CREATE_BATCH;

  const insert = createNaturalBatcher<NewTask, CreatedTask>({
    maxBatchSize,
    run: (inputs) => createTasks(db, inputs),
  });
  const replica =
    readDb === undefined
      ? undefined
      : createReplicaWaiter(readDb, { timeoutMs: visibilityTimeoutMs });
  const enqueueCreated = (taskIds: readonly string[]): Promise<unknown> =>
    dispatcher.enqueueCreated !== undefined
      ? dispatcher.enqueueCreated(taskIds)
      : Promise.all(taskIds.map((taskId) => dispatcher.enqueue(taskId, 'created')));
  const wake = createNaturalBatcher<string, void>({
    maxBatchSize,
    run: async (taskIds): Promise<BatchOutcome<void>[]> => {
      await enqueueCreated(taskIds);
      return taskIds.map(() => ({ ok: true, value: undefined }));
    },
  });

  /** A lost wake-up is reported, never thrown: the task is durable and the sweeper finds it. */
  const dispatch = async (
    taskId: string,
    reason: 'created' | 'resumed' | 'swept',
  ): Promise<boolean> => {
    try {
      await (reason === 'created' ? wake(taskId) : dispatcher.enqueue(taskId, reason));
      return true;
    } catch (error) {
      options.onDispatchError?.(taskId, error);
      return false;
    }
  };

  return {
    async createAndDispatch(input, createOptions = {}) {
      const derivedId = createOptions.derivedId === true;
      const { task, created, woken } = await insert(input);
      if (replica !== undefined) {
        try {
          await replica.waitUntilReadable(task.id);
        } catch (error) {
          // A fresh random id: the client gets an error, not a handle, and no retry can ever name
          // this task, so withdraw it (unheld and never enqueued, so cancelled at once) before the
          // sweeper runs work nobody can see. A derived id is kept: the retry names it again.
          // A repeat of an earlier create keeps its task: that one's handle was already given out.
          if (created && !derivedId) await requestCancel(db, input.owner, task.id);
          throw error;
        }
      }
      // A repeat wakes nothing twice: a derived-id repeat wakes only a task no wake-up is known
      // to have reached (its first create may have failed its replica wait before enqueueing),
      // and the created job's id is the task id, so if that first wake-up is still queued the
      // add is a no-op (BullMQ keeps one job per id while it exists).
      const neverWoken = derivedId && !created && !woken && task.status === 'working';
      if (created || neverWoken) await dispatch(task.id, 'created');
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
      // The sweeper marks what it woke: the orphan's last change is older than the grace, so
      // without the mark the next sweep would find it again at once and ask Redis about it.
      if (dispatcher.enqueueSwept === undefined) {
        let woken = 0;
        for (const taskId of orphans) {
          if (await dispatch(taskId, 'swept')) {
            woken += 1;
            await markEnqueuedMany(db, [taskId]).catch((error: unknown) =>
              options.onDispatchError?.(taskId, error),
            );
          }
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
