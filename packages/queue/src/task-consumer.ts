import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { TASK_QUEUE_NAME, parseWakeUps, type WakeUpJob } from './wake-up-job.js';
import {
  asBullConnection,
  createConsumerConnection,
  type RedisClient,
} from './redis-connection.js';
import { effectivePrefix, type RedisEndpoint } from './redis-endpoint.js';
import { watchForStalls, type ConsumerStall } from './stall-watch.js';
import { latestJobKey } from './task-queue.js';

export type { ConsumerStall } from './stall-watch.js';

/** Default of TaskConsumerOptions.stallCheckMs. */
export const DEFAULT_STALL_CHECK_MS = 15_000;

export interface TaskConsumerOptions {
  redis: RedisEndpoint;
  /** As TaskQueueOptions.prefix. */
  prefix?: string;
  /** Wake-ups handled at once at most (task slots); a job may carry several (ADR 0013). */
  concurrency: number;
  /**
   * BullMQ's job lock, held from a job's take until every wake-up it carries has started (and,
   * on an idle worker, until the next job comes, for at most half the lock: see runJob). A job
   * whose worker died before that is redelivered after this (stalled check); once started, a
   * task's Postgres lease and the sweeper decide who may work on it.
   */
  lockDurationMs?: number;
  /**
   * How often the consumer checks that its fetch loop still takes wake-ups (see stall-watch.ts);
   * default DEFAULT_STALL_CHECK_MS, 0 turns the check off. Longer than BullMQ's blocking wait
   * (5 s), or an idle consumer that missed a wake-up marker would be replaced for nothing.
   */
  stallCheckMs?: number;
  /** Runs one wake-up. Should settle the task in Postgres itself; a throw is passed to onError. */
  handle(job: WakeUpJob): Promise<void>;
  /** A job whose payload is neither one wake-up nor a batch (parseWakeUps): dropped after this. */
  onInvalidPayload?(jobId: string | undefined, issues: string): void;
  /** The fetch loop was found stuck and its BullMQ worker replaced by a new one. */
  onStall?(stall: ConsumerStall): void;
  onError?(error: unknown): void;
}

export interface TaskConsumer {
  /** Stops fetching and waits for running handlers to return. */
  close(): Promise<void>;
  /** Resolves once connected to Redis. */
  waitUntilReady(): Promise<void>;
}

/** Deletes each latest-wake-up pointer only while it still names this job (not a newer one). */
const CLEAR_POINTERS_SCRIPT = `local n = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then n = n + redis.call('DEL', key) end
end
return n`;

/** How long close waits for completions still in flight before it drops the connection. */
const COMPLETIONS_AT_CLOSE_BOUND_MS = 5_000;

/** How long a replaced worker may take to close before its connection is dropped anyway. */
const REPLACED_CLOSE_BOUND_MS = 5_000;

/** The pause after a fetch failed (Redis unreachable) before the next one. */
const FETCH_RETRY_MS = 1_000;

/** A BullMQ worker used for fetching by hand, on a connection of its own. */
interface Fetcher {
  worker: ChainingWorker;
  connection: RedisClient;
  /** Resolves when this fetcher is retired or closed: a fetch stuck on it is given up. */
  stopped: Promise<undefined>;
  stop(): void;
}

/**
 * The consumer (ADR 0013). It fetches by hand (BullMQ's manual processing) so that it keeps the
 * task slots itself: it fetches only with a slot free; a job carrying more wake-ups than free
 * slots keeps the rest as credits, started as slots free, before it fetches again; the job is
 * completed once all its wake-ups have started. So a worker holds at most MAX_TASKS_PER_JOB − 1
 * wake-ups beyond its concurrency, and one job's ~40 Redis commands serve all its tasks.
 */
export function createTaskConsumer(options: TaskConsumerOptions): TaskConsumer {
  const lockDuration = options.lockDurationMs ?? 30_000;
  const prefix = effectivePrefix(options.redis, options.prefix);
  const slots = createSlots(options.concurrency);
  const running = new Set<Promise<void>>();
  const completing = new Set<Promise<void>>();
  // Takes (a fetch, a completion that takes the next job) given up on while still in flight.
  const abandoned = new Set<Promise<void>>();
  let taken = 0;
  let closing = false;
  let endFetch!: () => void;
  // Resolves at close: a blocking fetch in flight is given up rather than waited out.
  const closed = new Promise<undefined>((resolve) => (endFetch = () => resolve(undefined)));

  const start = (wakeUp: WakeUpJob): void => {
    slots.take();
    const run = options
      .handle(wakeUp)
      .catch((error: unknown) => options.onError?.(error))
      .finally(() => {
        running.delete(run);
        slots.give();
      });
    running.add(run);
  };

  /**
   * A take raced with its fetcher's end and with close, so that one stuck on a dead connection
   * holds up neither. A take that loses may still bring a job (Redis ran it, its reply was late):
   * that job goes back to the wait list at once, instead of staying active under a lock nobody
   * renews until the lock lapses.
   */
  const takeUnlessStopped = async (
    fetcher: Fetcher,
    taking: Promise<Job<unknown> | undefined>,
    token: string,
  ): Promise<Job<unknown> | undefined> => {
    const job = await Promise.race([taking, fetcher.stopped, closed]);
    if (job !== undefined) return job;
    const late = taking
      .then((taken) => taken?.moveToWait(token))
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => abandoned.delete(late));
    abandoned.add(late);
    return undefined;
  };

  let current = startFetcher(options, prefix, lockDuration);
  const retiring = new Set<Promise<void>>();
  const stallCheckMs = options.stallCheckMs ?? DEFAULT_STALL_CHECK_MS;
  const stallWatch =
    stallCheckMs > 0
      ? watchForStalls({
          redis: options.redis,
          prefix,
          intervalMs: stallCheckMs,
          hasFreeSlot: () => slots.free() > 0,
          taken: () => taken,
          onStall: (stall) => {
            const stuck = current;
            current = startFetcher(options, prefix, lockDuration);
            const retired = retire(stuck).finally(() => retiring.delete(retired));
            retiring.add(retired);
            options.onStall?.(stall);
          },
        })
      : undefined;

  /** A completion may take the next job: the fetcher is still the current one, with a slot free. */
  const mayTakeNext = (fetcher: Fetcher): boolean =>
    !closing && fetcher === current && slots.free() > 0;

  /**
   * Starts a job's wake-ups as slots free, then completes the job. With a slot still free the
   * completion also takes the next waiting job (returned, under the same token), in the same
   * script: one round trip where a completion and a fetch took two. When the job was the last
   * one waiting, the completion first waits for the next (waitForMarker) to take it.
   */
  const runJob = async (
    fetcher: Fetcher,
    job: Job<unknown>,
    token: string,
  ): Promise<Job<unknown> | undefined> => {
    taken += 1;
    const parsed = parseWakeUps(job.data);
    if (!parsed.ok) {
      options.onInvalidPayload?.(job.id, parsed.issues);
    } else {
      // Started in one turn while slots are free: their claims then share one statement however
      // the claim batcher flushes (flushing a microtask after the first, it split them).
      for (const wakeUp of parsed.wakeUps) {
        if (slots.free() === 0) await slots.untilFree();
        start(wakeUp);
      }
    }
    // Its take left the queue empty: the completion waits for the next job's marker and takes
    // that job, so an idle worker spends two round trips on a job where it spent three (the
    // marker, the take, a completion that found nothing). Bounded: see waitForMarker.
    if (!fetcher.worker.jobsLeft && mayTakeNext(fetcher)) {
      await Promise.race([fetcher.worker.waitForMarker(), fetcher.stopped, closed]);
    }
    // The job's pointers are deleted with its completion, in one write (inOneWrite): an active
    // job is not pending, so until then a lookup through them finds nothing pending either.
    return inOneWrite(fetcher.connection, () => {
      if (parsed.ok) clearPointers(fetcher.connection, prefix, job.id, parsed.wakeUps);
      return complete(fetcher, job, token);
    });
  };

  /**
   * Completes a job, with a slot still free taking the next one too (raced as the fetch is). A
   * lock that lapsed meanwhile (the job was handed out again) fails the completion, harmlessly
   * (claimLease absorbs it), and the loop fetches as usual.
   */
  const complete = async (
    fetcher: Fetcher,
    job: Job<unknown>,
    token: string,
  ): Promise<Job<unknown> | undefined> => {
    if (mayTakeNext(fetcher))
      return await takeUnlessStopped(
        fetcher,
        fetcher.worker.completeAndTakeNext(job, token).catch(() => undefined),
        token,
      );
    // Not awaited here: the next fetch, which waits for a slot, need not wait for it (close does).
    const completion = job
      .moveToCompleted(undefined, token, false)
      .then(() => undefined)
      .catch(() => undefined)
      .finally(() => completing.delete(completion));
    completing.add(completion);
    return undefined;
  };

  const loop = (async () => {
    let sequence = 0;
    // A job a completion took for us, with its fetcher and token (runJob).
    let next: { fetcher: Fetcher; job: Job<unknown>; token: string } | undefined;
    while (!closing) {
      await slots.untilFree();
      if (closing) break;
      if (next !== undefined) {
        const taken = next;
        next = undefined;
        const job = await runJob(taken.fetcher, taken.job, taken.token);
        if (job !== undefined) next = { fetcher: taken.fetcher, job, token: taken.token };
        continue;
      }
      const fetcher = current;
      const token = `${fetcher.worker.id}:${sequence++}`;
      let job: Job<unknown> | undefined;
      try {
        job = await takeUnlessStopped(
          fetcher,
          fetcher.worker.getNextJob(token, { block: true }),
          token,
        );
      } catch (error) {
        if (closing) break;
        options.onError?.(error);
        await sleep(FETCH_RETRY_MS);
        continue;
      }
      if (job === undefined) continue;
      const chained = await runJob(fetcher, job, token);
      if (chained !== undefined) next = { fetcher, job: chained, token };
    }
    // Taken but not started (the consumer is closing): back to the wait list for another worker,
    // or, if that fails, redelivered once its lock lapses.
    if (next !== undefined) await next.job.moveToWait(next.token).catch(() => undefined);
  })();

  return {
    async close() {
      closing = true;
      stallWatch?.stop();
      endFetch();
      await loop;
      current.stop();
      // Bounded: a completion Redis never answers (a dead link) is given up; the disconnect
      // below fails it, and its job is handed out again once its lock lapses.
      // Unref: a normal close must not keep the process up for the bound.
      const bound = sleep(COMPLETIONS_AT_CLOSE_BOUND_MS, undefined, { ref: false });
      await Promise.race([Promise.all(completing), bound]);
      // Forced: nothing runs inside BullMQ's worker (the wake-ups run here), and an unforced
      // close would wait out a blocking fetch (up to 5 s). It ends a blocking fetch at once and
      // leaves the shared connection open for the late takes' moves back to the wait list.
      await current.worker.close(true);
      await Promise.race([Promise.all(abandoned), bound]);
      current.connection.disconnect();
      await Promise.all(running);
      await Promise.all(retiring);
    },
    async waitUntilReady() {
      await current.worker.waitUntilReady();
    },
  };
}

/** Counts the task slots in use, and lets the fetch loop wait for a free one. */
function createSlots(concurrency: number) {
  let used = 0;
  let waiter: (() => void) | undefined;
  return {
    free: () => concurrency - used,
    take() {
      used += 1;
    },
    give() {
      used -= 1;
      const next = waiter;
      waiter = undefined;
      next?.();
    },
    /** Resolves once a slot is free (at once if one is). One waiter: the fetch loop. */
    async untilFree(): Promise<void> {
      while (used >= concurrency) await new Promise<void>((resolve) => (waiter = resolve));
    },
  };
}

/**
 * Runs `send` with the connection's socket corked until this turn of the event loop ends, so the
 * commands it issues (through however many promise steps, as BullMQ's scripts take) leave in one
 * write: on small VMs a write to a socket costs far more than a small command (issue 30). A
 * cluster connection, one socket per node, sends as it always does.
 */
function inOneWrite<T>(connection: RedisClient, send: () => T): T {
  const socket = connection instanceof Redis ? connection.stream : undefined;
  if (socket === undefined || !socket.writable) return send();
  socket.cork();
  try {
    return send();
  } finally {
    setImmediate(() => socket.uncork());
  }
}

/**
 * A job's latest-wake-up pointers (task-queue.ts) serve to find it while it is pending; once
 * taken it is not pending any more, so they go with its completion instead of living out their
 * 24 h TTL, in one command: a later wake-up's, each deleted only while it still names this job
 * (a newer wake-up of the task, a second resume while a batch waits, moved it on, and the
 * sweeper must still find that one). Not awaited: a failure leaves the keys to their TTL, and at
 * worst a sweep adds a wake-up that claimLease absorbs.
 */
function clearPointers(
  connection: RedisClient,
  prefix: string,
  jobId: string | undefined,
  wakeUps: readonly WakeUpJob[],
): void {
  if (jobId === undefined) return;
  // A created job's id is its task's id: it wrote no pointer.
  const keys = wakeUps
    .filter(({ taskId }) => taskId !== jobId)
    .map(({ taskId }) => latestJobKey(prefix, taskId));
  if (keys.length === 0) return;
  // A created batch's tasks get no other wake-up while it waits (the sweeper finds the batch
  // through these pointers): one plain DEL, no GET per key.
  const clearing = wakeUps.every(({ reason }) => reason === 'created')
    ? connection.del(...keys)
    : connection.eval(CLEAR_POINTERS_SCRIPT, keys.length, ...keys, jobId);
  clearing.catch(() => undefined);
}

/**
 * A BullMQ worker fetched by hand that can also complete a job and take the next waiting one in
 * one script (moveToFinished's fetchNext), as BullMQ's own processor does after each job.
 */
class ChainingWorker extends Worker<unknown> {
  /**
   * Whether the last take left another job waiting (the patched scripts' 5th reply element,
   * patches/bullmq@*.patch). True until a take says otherwise: only a known-empty queue makes
   * a completion wait for the next job.
   */
  jobsLeft = true;

  /**
   * When the next delayed wake-up is due, as the last take's reply said (its 6th element), ms
   * since the epoch; 0 for none. A hold ends by then: BullMQ's wait would otherwise last 5 s.
   */
  private delayedDueAt = 0;

  async completeAndTakeNext(job: Job<unknown>, token: string): Promise<Job<unknown> | undefined> {
    const completed = await job.moveToCompleted(undefined, token, true);
    if (!Array.isArray(completed)) return undefined;
    return await this.nextFromReply(completed as TakeReply, token);
  }

  /** As BullMQ's own, keeping what the reply says of the jobs left. */
  protected override async moveToActive(
    client: BullClient,
    token: string,
    name?: string,
  ): Promise<Job<unknown>> {
    const reply = (await this.scripts.moveToActive(client, token, name)) as TakeReply;
    return (await this.nextFromReply(reply, token)) as Job<unknown>;
  }

  /**
   * Waits (BullMQ's blocking wait: up to its drain delay, 5 s, half the lock, or until the next
   * delayed job is due) until the queue's marker says a job may be waiting. Resolves either way;
   * the completion that follows takes what is there, a delayed job come due included
   * (moveToFinished promotes it).
   */
  async waitForMarker(): Promise<void> {
    const internals = this as unknown as WorkerInternals;
    const client = await internals.blockingConnection.client;
    // As long as BullMQ's own wait (its drain delay, 5 s), never past half the job's lock (a
    // short lease makes a short lock), and no later than a delayed wake-up is due.
    const drainDelayMs = (this.opts.drainDelay ?? 5) * 1_000;
    const holdMs = Math.min(drainDelayMs, (this.opts.lockDuration ?? 30_000) / 2);
    const until = Math.min(Date.now() + holdMs, this.delayedDueAt || Infinity);
    await internals.waitForJob(client, until);
  }

  private async nextFromReply(reply: TakeReply, token: string): Promise<Job<unknown> | undefined> {
    const [jobData, jobId, rateLimitDelay, delayUntil, jobsLeft, nextDelayedAt] = reply;
    this.jobsLeft = jobsLeft === 1;
    this.delayedDueAt = nextDelayedAt ?? 0;
    // As Worker.moveToActive and handleCompleted: the delays bound the next blocking fetch (a
    // delayed wake-up's due time); nextJobFromJobData marks the queue drained when no job came.
    (this as unknown as WorkerInternals).updateDelays(rateLimitDelay, delayUntil);
    return (await this.nextJobFromJobData(jobData, jobId, token)) ?? undefined;
  }
}

/** A take's reply (moveToActive, or moveToFinished taking the next job), as patched. */
type TakeReply = [
  Parameters<Worker['nextJobFromJobData']>[0],
  string | undefined,
  number,
  number,
  /** Whether another job waits (1) or not (0). */
  (1 | 0)?,
  /** When the next delayed job is due, ms since the epoch (0: none). */
  number?,
];

/** A connection as BullMQ's Worker takes it. */
type BullClient = Parameters<Worker['moveToActive']>[0];

/** The parts of BullMQ's Worker used here that its types keep private. */
interface WorkerInternals {
  blockingConnection: { client: Promise<BullClient> };
  waitForJob(client: BullClient, blockUntil: number): Promise<number>;
  updateDelays(limit: number, until: number): void;
}

/** A BullMQ worker without a processor (fetched by hand), on a connection of its own. */
function startFetcher(options: TaskConsumerOptions, prefix: string, lockDuration: number): Fetcher {
  const connection = createConsumerConnection(options.redis);
  connection.on('error', (error) => options.onError?.(error));
  const worker = new ChainingWorker(TASK_QUEUE_NAME, null, {
    connection: asBullConnection(connection),
    prefix,
    lockDuration,
    stalledInterval: Math.max(1_000, Math.floor(lockDuration / 2)),
    maxStalledCount: 2,
  });
  worker.on('error', (error) => options.onError?.(error));
  // Jobs taken by a worker that died before completing them go back to the wait list.
  void worker.startStalledCheckTimer().catch((error: unknown) => options.onError?.(error));
  let stop!: () => void;
  const stopped = new Promise<undefined>((resolve) => (stop = () => resolve(undefined)));
  return { worker, connection, stopped, stop };
}

/**
 * A stuck worker may never finish closing (its fetch never returns): it gets a bound, then its
 * connection is dropped. A job it took but never completed is handed out again once its lock
 * lapses, which claimLease absorbs.
 */
async function retire(fetcher: Fetcher): Promise<void> {
  fetcher.stop();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    fetcher.worker.close(true).catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, REPLACED_CLOSE_BOUND_MS))),
  ]);
  clearTimeout(timer);
  fetcher.connection.disconnect();
}
