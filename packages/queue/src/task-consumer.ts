import { Worker, type Job } from 'bullmq';
import { RunTaskJobSchema, TASK_QUEUE_NAME, type RunTaskJob } from './wake-up-job.js';
import { asBullConnection, createConsumerConnection } from './redis-connection.js';
import { effectivePrefix, type RedisEndpoint } from './redis-endpoint.js';

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
  /** Runs one wake-up. Should settle the task in Postgres itself; a throw only fails the job. */
  handle(job: RunTaskJob): Promise<void>;
  /** A job whose payload failed RunTaskJobSchema: it is dropped after this. */
  onInvalidPayload?(jobId: string | undefined, issues: string): void;
  onError?(error: unknown): void;
}

export interface TaskConsumer {
  /** Stops fetching and waits for running handlers to return. */
  close(): Promise<void>;
  /** Resolves once connected to Redis. */
  waitUntilReady(): Promise<void>;
}

export function createTaskConsumer(options: TaskConsumerOptions): TaskConsumer {
  const connection = createConsumerConnection(options.redis);
  connection.on('error', (error) => options.onError?.(error));
  const lockDuration = options.lockDurationMs ?? 30_000;
  const worker = new Worker<unknown>(
    TASK_QUEUE_NAME,
    async (job: Job<unknown>) => {
      const parsed = RunTaskJobSchema.safeParse(job.data);
      if (!parsed.success) {
        options.onInvalidPayload?.(job.id, parsed.error.message);
        return;
      }
      await options.handle(parsed.data);
    },
    {
      connection: asBullConnection(connection),
      prefix: effectivePrefix(options.redis, options.prefix),
      concurrency: options.concurrency,
      lockDuration,
      stalledInterval: Math.max(1_000, Math.floor(lockDuration / 2)),
      maxStalledCount: 2,
    },
  );
  worker.on('error', (error) => options.onError?.(error));
  return {
    async close() {
      await worker.close();
      connection.disconnect();
    },
    async waitUntilReady() {
      await worker.waitUntilReady();
    },
  };
}
