import { CompiledQuery } from 'kysely';
import type { Db } from '../db/database.js';
import { createNaturalBatcher, type BatchOutcome } from '../db/natural-batcher.js';
import { lockInIdOrder } from '../sql/row-locks.js';

/** The queue seen from here: a wake-up that may be lost (Postgres stays the record). */
export interface WakeUpQueue {
  wake(
    taskId: string,
    reason: WakeUpReason,
    /** Deliver no earlier than this many ms from now (a retry's backoff). */
    options?: { delayMs?: number },
  ): Promise<void>;
  /**
   * Wakes a batch of new or resumed tasks at once (one round trip for the lot), as `wake(id,
   * reason)` would each. Without it the outbox wakes them one by one. Must be idempotent per task
   * id for `created`, like `wake(id, 'created')`.
   */
  wakeBatch?(taskIds: readonly string[], reason: 'created' | 'resumed'): Promise<void>;
  /**
   * Wakes a batch of orphans at once (one round trip for the lot); resolves with how many got a
   * new wake-up, the rest having one waiting already. Without it the outbox wakes one by one.
   */
  wakeSwept?(taskIds: readonly string[]): Promise<number>;
}

/**
 * Why a wake-up is sent: `created` and `resumed` by the task service, `swept` by the sweeper,
 * `retry` and `released` by a worker (the queue's WAKE_UP_REASONS).
 */
export type WakeUpReason = 'created' | 'resumed' | 'swept' | 'retry' | 'released';

/**
 * The outbox mark: a wake-up for these tasks reached the queue (only `working` rows take it).
 * The rows are locked in id order first (sql/row-locks.ts): a sweep marks many at once.
 */
const MARK_WAKE_UP_SENT = `UPDATE tasks SET enqueued_at = now()
  WHERE id IN (${lockInIdOrder({ where: `t.id = ANY($1::text[]) AND t.status = 'working'` })})
    AND status = 'working'`;

export async function markWakeUpSent(db: Db, taskIds: readonly string[]): Promise<void> {
  if (taskIds.length === 0) return;
  await db.executeQuery(CompiledQuery.raw(MARK_WAKE_UP_SENT, [[...taskIds]]));
}

/** One batch of orphans woken by the sweeper. */
export interface OrphanWakeUp {
  /** Of the orphans, how many got a new wake-up. */
  woken: number;
  /** How many could not be woken (they stay orphans for the next sweep). */
  failed: number;
}

/**
 * The wake-up step of the outbox, the one place that sends a task's wake-up after its row
 * committed (the task service waits until the row is readable first). Three callers:
 *  - the task service after a create or a resume: no mark. The row itself, `working`, unheld and
 *    last changed more than the sweeper's wake-up grace ago, is what the sweeper wakes again,
 *    so a lost wake-up is recovered from the row alone. A failure is reported, never thrown. For
 *    the same reason neither a create's reply nor an answer's needs to wait for its wake-up: it
 *    is sent right after (wakeAfterReply), and a process killed in between leaves a row the
 *    sweeper wakes.
 *  - the sweeper (through its door, createOrphanWaker) for orphans: it marks what it woke, since the
 *    orphan's last change is older than the grace and the next sweep would find it again at once.
 *  - a worker's own wake-up (a retry after backoff, a task given back at shutdown): it marks too,
 *    or the sweeper would see a stale `enqueued_at` on an unheld task and wake it early, defeating
 *    the backoff. The mark holds the sweeper off only for its grace, so a delay must not exceed
 *    that grace (the worker's env.ts caps RETRY_MAX_DELAY_MS to it). Failures are thrown.
 */
export interface Outbox {
  /**
   * Wakes a created or resumed task once the current turn of the event loop is over, so the
   * reply (its row committed, and readable already) is written before the wake-up goes to Redis:
   * the client does not wait for a queue round trip, nor for a Redis outage's timeout. Resolves
   * at once, or, while more than `maxPendingWakeUps` are unsent, when this one has been sent or
   * reported lost (backpressure).
   */
  wakeAfterReply(
    taskId: string,
    reason: 'created' | 'resumed',
    onSent?: (sent: boolean) => void,
  ): Promise<void>;
  /** Resolves when every wake-up wakeAfterReply has deferred was sent or reported lost. */
  settle(): Promise<void>;
  wakeOrphans(taskIds: readonly string[]): Promise<OrphanWakeUp>;
  wakeAgain(taskId: string, reason: 'retry' | 'released', delayMs: number): Promise<void>;
}

/** What waking orphans needs: the queue, the mark, and whom to tell about a failure. */
export interface OrphanWakeUpOptions {
  db: Db;
  wakeUpQueue: WakeUpQueue;
  /** Told about a wake-up (or mark) that failed; the task is still durable and the sweeper will find it. */
  onWakeUpError?: (taskId: string, error: unknown) => void;
  /** Told about an orphan batch that failed as a whole; default: onWakeUpError for each task. */
  onSweepBatchError?: (taskIds: readonly string[], error: unknown) => void;
}

export interface OutboxOptions extends OrphanWakeUpOptions {
  /** Wake-ups of one reason (created, resumed) sent together at most; default 256. */
  maxBatchSize?: number;
  /** Deferred wake-ups (wakeAfterReply) not yet sent beyond which a reply waits; default 1024. */
  maxPendingWakeUps?: number;
  /**
   * How long the first deferred wake-up to find no add in flight waits for others to share its
   * job (natural-batcher.ts, lingerMs); default 0. The reply never waits for it.
   */
  wakeUpLingerMs?: number;
}

export function createOutbox(options: OutboxOptions): Outbox {
  const {
    db,
    wakeUpQueue,
    maxBatchSize = 256,
    maxPendingWakeUps = 1024,
    wakeUpLingerMs = 0,
  } = options;
  // One batcher per reason, since a job carries one reason: creates of a turn share a batch, and
  // so do the answers (tasks/update, the console's resume) that arrive while one is in flight.
  const batcherFor = (reason: 'created' | 'resumed') =>
    createNaturalBatcher<string, void>({
      maxBatchSize,
      lingerMs: wakeUpLingerMs,
      run: async (taskIds): Promise<BatchOutcome<void>[]> => {
        if (wakeUpQueue.wakeBatch === undefined)
          return await wakeEach(wakeUpQueue, taskIds, reason);
        await wakeUpQueue.wakeBatch(taskIds, reason);
        return taskIds.map(() => ({ ok: true, value: undefined }));
      },
    });
  const batchers = { created: batcherFor('created'), resumed: batcherFor('resumed') };

  /**
   * Wake-ups of one reason that arrive together go out in one batch (natural batching); resolves
   * once this one was handed to the queue (true) or reported lost (false). A lost wake-up is
   * reported, never thrown: the task is durable and the sweeper finds it. A batch that fails is
   * lost for each of its tasks.
   */
  const wake = async (taskId: string, reason: 'created' | 'resumed'): Promise<boolean> => {
    try {
      await batchers[reason](taskId);
      return true;
    } catch (error) {
      options.onWakeUpError?.(taskId, error);
      return false;
    }
  };

  const pending = new Set<Promise<boolean>>();
  // Deferred in this turn: sent by one setImmediate, which runs after this turn's callbacks and
  // microtasks (where the replies are written), all in one go so that those of a reason share
  // one addBulk.
  type Deferred = {
    taskId: string;
    reason: 'created' | 'resumed';
    resolve: (sent: Promise<boolean>) => void;
  };
  let deferred: Deferred[] = [];
  const sendDeferred = (): void => {
    const due = deferred;
    deferred = [];
    for (const { taskId, reason, resolve } of due) resolve(wake(taskId, reason));
  };
  return {
    wakeAfterReply(taskId, reason, onSent) {
      const sent = new Promise<boolean>((resolve) => {
        deferred.push({ taskId, reason, resolve });
        if (deferred.length === 1) setImmediate(sendDeferred);
      });
      pending.add(sent);
      void sent.then((ok) => {
        pending.delete(sent);
        onSent?.(ok);
      });
      return pending.size > maxPendingWakeUps ? sent.then(() => undefined) : Promise.resolve();
    },
    async settle() {
      while (pending.size > 0) await Promise.all(pending);
    },
    wakeOrphans: (orphans) => wakeOrphans(options, orphans),
    async wakeAgain(taskId, reason, delayMs) {
      await wakeUpQueue.wake(taskId, reason, { delayMs });
      await markWakeUpSent(db, [taskId]);
    },
  };
}

/** A batch through a queue without wakeBatch: one wake-up each, each with its own outcome. */
function wakeEach(
  wakeUpQueue: WakeUpQueue,
  taskIds: readonly string[],
  reason: 'created' | 'resumed',
): Promise<BatchOutcome<void>[]> {
  return Promise.all(
    taskIds.map((taskId) =>
      wakeUpQueue.wake(taskId, reason).then(
        (): BatchOutcome<void> => ({ ok: true, value: undefined }),
        (error: unknown): BatchOutcome<void> => ({ ok: false, error }),
      ),
    ),
  );
}

/**
 * The orphans' wake-ups: in one call when the queue has wakeSwept, else one by one, each marked
 * sent once it went out (see Outbox.wakeOrphans). A lost wake-up is reported, never thrown: the
 * task stays an orphan for the next sweep. Needs no outbox: the sweeper calls it directly.
 */
export async function wakeOrphans(
  options: OrphanWakeUpOptions,
  orphans: readonly string[],
): Promise<OrphanWakeUp> {
  const { db, wakeUpQueue } = options;
  if (wakeUpQueue.wakeSwept === undefined) {
    let woken = 0;
    for (const taskId of orphans) {
      try {
        await wakeUpQueue.wake(taskId, 'swept');
      } catch (error) {
        options.onWakeUpError?.(taskId, error);
        continue;
      }
      woken += 1;
      await markWakeUpSent(db, [taskId]).catch((error: unknown) =>
        options.onWakeUpError?.(taskId, error),
      );
    }
    return { woken, failed: orphans.length - woken };
  }
  try {
    const woken = await wakeUpQueue.wakeSwept(orphans);
    await markWakeUpSent(db, orphans);
    return { woken, failed: 0 };
  } catch (error) {
    if (options.onSweepBatchError !== undefined) options.onSweepBatchError(orphans, error);
    else for (const taskId of orphans) options.onWakeUpError?.(taskId, error);
    return { woken: 0, failed: orphans.length };
  }
}
