import { Worker, type Job } from 'bullmq';
import { WakeUpJobSchema, TASK_QUEUE_NAME, type WakeUpJob } from './wake-up-job.js';
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
  concurrency: number;
  /**
   * BullMQ's job lock. A job whose worker died is redelivered after this (stalled check), so
   * keep it near the Postgres lease: the lease, not this lock, decides who may work.
   */
  lockDurationMs?: number;
  /**
   * How often the consumer checks that its fetch loop still takes wake-ups (see stall-watch.ts);
   * default DEFAULT_STALL_CHECK_MS, 0 turns the check off. Longer than BullMQ's blocking wait
   * (5 s), or an idle consumer that missed a wake-up marker would be replaced for nothing.
   */
  stallCheckMs?: number;
  /** Runs one wake-up. Should settle the task in Postgres itself; a throw only fails the job. */
  handle(job: WakeUpJob): Promise<void>;
  /** A job whose payload failed WakeUpJobSchema: it is dropped after this. */
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

/** Deletes the latest-wake-up pointer only while it still names this job (not a newer one). */
const CLEAR_POINTER_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** How long a replaced worker may take to close before its connection is dropped anyway. */
const REPLACED_CLOSE_BOUND_MS = 5_000;

interface Fetcher {
  worker: Worker<unknown>;
  connection: RedisClient;
}

export function createTaskConsumer(options: TaskConsumerOptions): TaskConsumer {
  const lockDuration = options.lockDurationMs ?? 30_000;
  const prefix = effectivePrefix(options.redis, options.prefix);
  let running = 0;
  let taken = 0;

  const processor = async (job: Job<unknown>): Promise<void> => {
    taken += 1;
    running += 1;
    try {
      const parsed = WakeUpJobSchema.safeParse(job.data);
      if (!parsed.success) {
        options.onInvalidPayload?.(job.id, parsed.error.message);
        return;
      }
      if (job.id !== undefined && job.id !== parsed.data.taskId)
        clearLatestPointer(current.connection, latestJobKey(prefix, parsed.data.taskId), job.id);
      await options.handle(parsed.data);
    } finally {
      running -= 1;
    }
  };

  let current = startFetcher(options, prefix, lockDuration, processor);
  const retiring = new Set<Promise<void>>();
  const stallCheckMs = options.stallCheckMs ?? DEFAULT_STALL_CHECK_MS;
  const stallWatch =
    stallCheckMs > 0
      ? watchForStalls({
          redis: options.redis,
          prefix,
          intervalMs: stallCheckMs,
          hasFreeSlot: () => running < options.concurrency,
          taken: () => taken,
          onStall: (stall) => {
            const stuck = current;
            current = startFetcher(options, prefix, lockDuration, processor);
            const retired = retire(stuck).finally(() => retiring.delete(retired));
            retiring.add(retired);
            options.onStall?.(stall);
          },
        })
      : undefined;

  return {
    async close() {
      stallWatch?.stop();
      await current.worker.close();
      current.connection.disconnect();
      await Promise.all(retiring);
    },
    async waitUntilReady() {
      await current.worker.waitUntilReady();
    },
  };
}

/**
 * A later wake-up's pointer (task-queue.ts) serves to find it while it is pending; once taken,
 * the job is not pending any more, so the pointer goes now instead of living out its 24 h TTL
 * (a soak at 53 tasks/s grew Redis by ~0.2 MB a minute with them). Not awaited: a failure leaves
 * the key to its TTL, and at worst a sweep finds no pending job and adds a wake-up that
 * claimLease absorbs.
 */
function clearLatestPointer(connection: RedisClient, key: string, jobId: string): void {
  connection.eval(CLEAR_POINTER_SCRIPT, 1, key, jobId).catch(() => undefined);
}

/** A BullMQ worker on a connection of its own, so a replaced one takes nothing with it. */
function startFetcher(
  options: TaskConsumerOptions,
  prefix: string,
  lockDuration: number,
  processor: (job: Job<unknown>) => Promise<void>,
): Fetcher {
  const connection = createConsumerConnection(options.redis);
  connection.on('error', (error) => options.onError?.(error));
  const worker = new Worker<unknown>(TASK_QUEUE_NAME, processor, {
    connection: asBullConnection(connection),
    prefix,
    concurrency: options.concurrency,
    lockDuration,
    stalledInterval: Math.max(1_000, Math.floor(lockDuration / 2)),
    maxStalledCount: 2,
  });
  worker.on('error', (error) => options.onError?.(error));
  return { worker, connection };
}

/**
 * A stuck worker may never finish closing (its fetch never returns): it gets a bound, then its
 * connection is dropped. Its running handlers go on; their jobs' locks lapse and BullMQ hands
 * the jobs out again, which claimLease absorbs.
 */
async function retire(fetcher: Fetcher): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    fetcher.worker.close(true).catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, REPLACED_CLOSE_BOUND_MS))),
  ]);
  clearTimeout(timer);
  fetcher.connection.disconnect();
}
