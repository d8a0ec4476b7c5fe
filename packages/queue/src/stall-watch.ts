import { createProducerConnection, type RedisClient } from './redis-connection.js';
import type { RedisEndpoint } from './redis-endpoint.js';
import { TASK_QUEUE_NAME } from './wake-up-job.js';

/** What a stall check found: the wake-up nobody took, and how many checks in a row saw it. */
export interface ConsumerStall {
  oldestWaitingJobId: string;
  checks: number;
}

export interface StallWatch {
  stop(): void;
}

/** One check's read; it fails fast, a Redis outage only skips checks. */
const CHECK_TIMEOUT_MS = 2_000;

interface StallWatchOptions {
  redis: RedisEndpoint;
  prefix: string;
  intervalMs: number;
  hasFreeSlot: () => boolean;
  /** Jobs taken so far (a counter). */
  taken: () => number;
  onStall: (stall: ConsumerStall) => void;
}

/**
 * Notices a consumer whose BullMQ fetch loop no longer takes wake-ups (issue 26: after a Redis
 * Cluster failover, or a link that was a black hole for a while, a fetch can wait forever on a
 * command ioredis never settles, while the process, its heartbeat and its connections look fine).
 * BullMQ hands out the oldest waiting job first, so if the same job is the oldest in the wait list
 * (or, with none waiting, the first due delayed job) at two checks in a row, while this consumer had a free slot at both and took nothing between,
 * its loop did not fetch for a whole interval: a healthy one takes a waiting job at once, or
 * within its blocking wait (5 s) if the wake-up marker was lost. A busy consumer is never judged.
 * One LINDEX and one ZRANGE per interval and consumer, off the per-task path.
 */
export function watchForStalls(options: StallWatchOptions): StallWatch {
  const waitKey = `${options.prefix}:${TASK_QUEUE_NAME}:wait`;
  const delayedKey = `${options.prefix}:${TASK_QUEUE_NAME}:delayed`;
  const connect = (): RedisClient => {
    const connection = createProducerConnection(options.redis, CHECK_TIMEOUT_MS);
    connection.on('error', () => undefined);
    return connection;
  };
  let connection = connect();
  /**
   * The oldest waiting job, or else the first delayed one already due (a retry's wake-up): only a
   * fetch promotes due delayed jobs, so a stuck loop leaves them in the delayed set.
   */
  const oldestDue = async (client: RedisClient): Promise<string | null> => {
    const [waiting, delayed] = await Promise.all([
      client.lindex(waitKey, -1),
      client.zrange(delayedKey, 0, 0, 'WITHSCORES'),
    ]);
    if (waiting !== null) return waiting;
    const [jobId, score] = delayed;
    // BullMQ scores a delayed job with its due time × 4096 (plus a counter).
    if (jobId === undefined || score === undefined) return null;
    return Number(score) / 4096 <= Date.now() ? jobId : null;
  };
  let seen: { jobId: string; taken: number; checks: number } | undefined;
  let checking = false;
  let stopped = false;

  const check = async (): Promise<void> => {
    if (!options.hasFreeSlot()) {
      seen = undefined;
      return;
    }
    let oldest: string | null;
    try {
      oldest = await oldestDue(connection);
    } catch {
      // A timed-out command leaves its reply due on this connection: start a clean one.
      if (connection.status === 'ready') {
        connection.disconnect();
        connection = connect();
      }
      return;
    }
    const taken = options.taken();
    if (stopped) return;
    if (oldest === null || !options.hasFreeSlot()) {
      seen = undefined;
      return;
    }
    if (seen?.jobId === oldest && seen.taken === taken) {
      const stall = { oldestWaitingJobId: oldest, checks: seen.checks + 1 };
      // The replacement gets a whole interval before it is judged.
      seen = undefined;
      options.onStall(stall);
      return;
    }
    seen = { jobId: oldest, taken, checks: 1 };
  };

  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    void check().finally(() => (checking = false));
  }, options.intervalMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      connection.disconnect();
    },
  };
}
