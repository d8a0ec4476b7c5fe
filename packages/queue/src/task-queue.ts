import { Queue, type JobsOptions } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import { withDeadline } from './deadline.js';
import {
  MAX_TASKS_PER_JOB,
  WAKE_UP_JOB_NAME,
  TASK_QUEUE_NAME,
  batchJobIdFor,
  jobIdFor,
  type WakeUpBatch,
  type WakeUpJob,
  type WakeUpReason,
} from './wake-up-job.js';
import { asBullConnection, createProducerConnection } from './redis-connection.js';
import { effectivePrefix, type RedisEndpoint } from './redis-endpoint.js';

/** The reasons the task service sends, in batches (its outbox's natural batchers). */
export type BatchedReason = Extract<WakeUpReason, 'created' | 'resumed'>;

export interface WakeUpOptions {
  /** Deliver no earlier than this many ms from now (a retry's backoff). */
  delayMs?: number;
}

/** Satisfies the store's WakeUpQueue structurally (this package imports no store). */
export interface TaskQueue {
  /** Idempotent for `created` (the job id is the task id); see jobIdFor for the other reasons. */
  wake(taskId: string, reason: WakeUpReason, options?: WakeUpOptions): Promise<void>;
  /** Many wake-ups in one round trip (BullMQ addBulk), e.g. the sweeper's batch of orphans. */
  wakeMany(taskIds: readonly string[], reason: WakeUpReason): Promise<void>;
  /**
   * The task service's batch of wake-ups, new tasks or resumed ones: one job per
   * MAX_TASKS_PER_JOB of them carrying the reason (ADR 0013), each task findable by hasPendingJob
   * through its pointer. A lone wake-up is `wake(id, reason)`, as it was before batches. `created`
   * is idempotent per id (a repeated id is one wake-up); each `resumed` is a wake-up of its own.
   */
  wakeBatch(taskIds: readonly string[], reason: BatchedReason): Promise<void>;
  /**
   * A waiting or delayed wake-up exists (active ones do not count). The sweeper asks this: for a
   * task Postgres calls orphaned, an active job is a dead or finishing worker's, not a delivery
   * still to come, so only a pending job makes another wake-up redundant.
   */
  hasPendingJob(taskId: string): Promise<boolean>;
  /** hasPendingJob for a batch, the lookups pipelined; resolves with the ids that have one. */
  pendingJobs(taskIds: readonly string[]): Promise<Set<string>>;
  /** Throws if Redis is unreachable (for /readyz). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface TaskQueueOptions {
  redis: RedisEndpoint;
  /**
   * BullMQ key prefix; default DEFAULT_QUEUE_PREFIX. Producers and consumers must agree. On a
   * cluster it is hash-tagged when it has no tag (effectivePrefix).
   */
  prefix?: string;
  /** Bound on one wake-up or ping (a batch gets 2 ms more per task); default 2000 ms. */
  commandTimeoutMs?: number;
}

/**
 * How long the "latest wake-up" pointer lives; longer than any sane queue backlog. The pointer
 * exists so the sweeper can find a pending later wake-up (its job id is random, see jobIdFor) and
 * not add a duplicate; the first wake-up's id is the task id, found without it, so `created`
 * writes none (at 10M tasks a day that key alone was ~1 GB of Redis). The consumer deletes it
 * with the completion of the job it names, in the same write (task-consumer.ts); the TTL only
 * bounds what a lost delete leaves behind.
 */
const LATEST_JOB_TTL_MS = 24 * 60 * 60 * 1_000;
const PENDING_STATES = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);

export function latestJobKey(prefix: string, taskId: string): string {
  return `${prefix}:${TASK_QUEUE_NAME}:mcp-latest:${taskId}`;
}

/**
 * The producer side. Jobs are removed as soon as they finish, either way (removeOnComplete and
 * removeOnFail): Postgres keeps the record, Redis only the wake-ups still to deliver.
 */
export function createTaskQueue(options: TaskQueueOptions): TaskQueue {
  const prefix = effectivePrefix(options.redis, options.prefix);
  const timeoutMs = options.commandTimeoutMs ?? 2_000;
  const connection = createProducerConnection(options.redis, timeoutMs);
  // Errors surface through the rejected commands; the event only needs a listener so ioredis
  // does not report "unhandled error event" while reconnecting.
  connection.on('error', () => undefined);
  const queue = new WakeUpQueue(TASK_QUEUE_NAME, {
    connection: asBullConnection(connection),
    prefix,
    defaultJobOptions: { removeOnComplete: true, removeOnFail: true, attempts: 1 },
  });
  queue.on('error', () => undefined);

  const producer: Producer = { queue, connection, prefix, timeoutMs };
  const hasJob = (taskId: string): Promise<boolean> =>
    withDeadline(
      checkJob(producer, taskId),
      timeoutMs,
      `job lookup for ${taskId} timed out after ${timeoutMs} ms`,
    );

  return {
    wake: (taskId, reason, wakeUpOptions) => wakeOne(producer, taskId, reason, wakeUpOptions),
    wakeMany: (taskIds, reason) => wakeMany(producer, taskIds, reason),
    wakeBatch: (taskIds, reason) => wakeBatch(producer, taskIds, reason),
    pendingJobs: (taskIds) => pendingJobs(producer, taskIds),
    hasPendingJob: hasJob,
    async ping() {
      await withDeadline(
        connection.ping(),
        timeoutMs,
        `Redis ping timed out after ${timeoutMs} ms`,
      );
    },
    async close() {
      await queue.close().catch(() => undefined);
      connection.disconnect();
    },
  };
}

const isPending = async (queue: Producer['queue'], jobId: string): Promise<boolean> =>
  PENDING_STATES.has(await queue.getJobState(jobId));

/**
 * Looks at the created job and the latest later wake-up (a pointer written by wake): older
 * wake-ups of a task are superseded by the latest one for this purpose.
 */
async function checkJob({ queue, connection, prefix }: Producer, taskId: string): Promise<boolean> {
  // The connection refuses commands until it is ready (no offline queue): a lookup right after
  // start failed with "Stream isn't writeable" instead of waiting, as BullMQ's own calls do.
  await queue.waitUntilReady();
  const latest = await connection.get(latestJobKey(prefix, taskId));
  const candidates = latest === null || latest === taskId ? [taskId] : [taskId, latest];
  for (const jobId of candidates) if (await isPending(queue, jobId)) return true;
  return false;
}

const batchTimeoutMs = (timeoutMs: number, size: number): number => timeoutMs + 2 * size;

async function wakeOne(
  producer: Producer,
  taskId: string,
  reason: WakeUpReason,
  wakeUpOptions: WakeUpOptions = {},
): Promise<void> {
  const { timeoutMs } = producer;
  await withDeadline(
    addWakeUp(producer, taskId, reason, wakeUpOptions),
    timeoutMs,
    `enqueue of task ${taskId} timed out after ${timeoutMs} ms`,
  );
}

async function wakeMany(
  producer: Producer,
  taskIds: readonly string[],
  reason: WakeUpReason,
): Promise<void> {
  if (taskIds.length === 0) return;
  // A lone wake-up (every create at low load) skips the pipeline: ioredis builds a Pipeline
  // object per call, copying every command onto it, which costs more than the add itself.
  if (taskIds.length === 1) return await wakeOne(producer, taskIds[0]!, reason);
  const deadline = batchTimeoutMs(producer.timeoutMs, taskIds.length);
  await withDeadline(
    addWakeUps(producer, taskIds, reason),
    deadline,
    `enqueue of ${taskIds.length} tasks timed out after ${deadline} ms`,
  );
}

async function wakeBatch(
  producer: Producer,
  taskIds: readonly string[],
  reason: BatchedReason,
): Promise<void> {
  // A repeated create names one task and one job id (the task id), so it is one wake-up. Resumes
  // are counted: each made a task runnable, and a credit claims the fairest task, not its own.
  const ids = reason === 'created' ? [...new Set(taskIds)] : taskIds;
  if (ids.length === 0) return;
  if (ids.length === 1) return await wakeOne(producer, ids[0]!, reason);
  const deadline = batchTimeoutMs(producer.timeoutMs, ids.length);
  await withDeadline(
    addBatchJobs(producer, ids, reason),
    deadline,
    `enqueue of ${ids.length} tasks timed out after ${deadline} ms`,
  );
}

async function pendingJobs(producer: Producer, taskIds: readonly string[]): Promise<Set<string>> {
  // Issued together, ioredis pipelines them on the one connection.
  const lookups = Promise.all(taskIds.map((taskId) => checkJob(producer, taskId)));
  const deadline = batchTimeoutMs(producer.timeoutMs, taskIds.length);
  const pending = await withDeadline(
    lookups,
    deadline,
    `job lookup for ${taskIds.length} tasks timed out after ${deadline} ms`,
  );
  return new Set(taskIds.filter((_, index) => pending[index]));
}

/** What the add helpers write with: the BullMQ queue, its Redis connection and key prefix. */
interface Producer {
  queue: WakeUpQueue;
  connection: ReturnType<typeof createProducerConnection>;
  prefix: string;
  /** Bound on one wake-up or lookup (commandTimeoutMs). */
  timeoutMs: number;
}

/** Adds one wake-up job and, for a later wake-up (its own job id), the latest-wake-up pointer. */
async function addWakeUp(
  { queue, prefix }: Producer,
  taskId: string,
  reason: WakeUpReason,
  wakeUpOptions: WakeUpOptions,
): Promise<void> {
  const jobId = jobIdFor(taskId, reason);
  const job: BulkJob = {
    name: WAKE_UP_JOB_NAME,
    data: { taskId, reason },
    opts: { jobId, ...(wakeUpOptions.delayMs ? { delay: wakeUpOptions.delayMs } : {}) },
  };
  if (jobId === taskId) {
    await queue.add(job.name, job.data, job.opts);
    return;
  }
  // The pointer goes out with the add, in one write. If the add fails, the pointer names a job
  // that does not exist, which lookups read as "not live": at worst one duplicate wake-up
  // later, which claimLease absorbs.
  await queue.addWithPointers([job], [[taskId, jobId]], prefix);
}

/** Adds many wake-up jobs in one pipeline, with the pointers of the later ones alongside. */
async function addWakeUps(
  { queue, prefix }: Producer,
  taskIds: readonly string[],
  reason: WakeUpReason,
): Promise<void> {
  const jobs = taskIds.map((taskId): BulkJob => ({
    name: WAKE_UP_JOB_NAME,
    data: { taskId, reason },
    opts: { jobId: jobIdFor(taskId, reason) },
  }));
  // `created` wake-ups are found by their id alone: no pointers. An id already in Redis
  // (waiting, active, delayed) is left as it is.
  const pointers = jobs
    .map(({ opts }, index): [string, string] => [taskIds[index]!, opts.jobId])
    .filter(([taskId, jobId]) => jobId !== taskId);
  if (pointers.length === 0) {
    await queue.addBulk(jobs);
    return;
  }
  await queue.addWithPointers(jobs, pointers, prefix);
}

/** Splits ids into runs of at most `size`. */
function chunks<T>(items: readonly T[], size: number): T[][] {
  const runs: T[][] = [];
  for (let start = 0; start < items.length; start += size)
    runs.push(items.slice(start, start + size));
  return runs;
}

/**
 * Adds the wake-ups of many tasks as jobs of up to MAX_TASKS_PER_JOB tasks each (ADR 0013), in
 * one pipeline, with a latest-wake-up pointer per task whose job id is not its own (every task of
 * a batch job, a lone `resumed`): the sweeper's pendingJobs finds a task's job through it. A run
 * of one is an ordinary job, as `wake` adds it.
 */
async function addBatchJobs(
  { queue, prefix }: Producer,
  taskIds: readonly string[],
  reason: WakeUpReason,
): Promise<void> {
  const jobs = chunks(taskIds, MAX_TASKS_PER_JOB).map((ids): BulkJob =>
    ids.length === 1
      ? {
          name: WAKE_UP_JOB_NAME,
          data: { taskId: ids[0]!, reason },
          opts: { jobId: jobIdFor(ids[0]!, reason) },
        }
      : {
          name: WAKE_UP_JOB_NAME,
          data: { taskIds: ids, reason },
          opts: { jobId: batchJobIdFor(ids[0]!, reason) },
        },
  );
  const pointers = jobs.flatMap(({ data, opts }) =>
    ('taskIds' in data ? data.taskIds : [data.taskId])
      .filter((taskId) => taskId !== opts.jobId)
      .map((taskId): [string, string] => [taskId, opts.jobId]),
  );
  await queue.addWithPointers(jobs, pointers, prefix);
}

/** A wake-up job as addBulk takes it, its id always set. */
interface BulkJob {
  name: string;
  data: WakeUpJob | WakeUpBatch;
  opts: JobsOptions & { jobId: string };
}

/**
 * BullMQ's Queue whose adds can carry latest-wake-up pointers: the pointers' SETs and the jobs'
 * add scripts go in one pipeline — one write where a pipeline of pointers and another of adds
 * took two — the pointers first, so a consumer that takes a job at once finds them to delete.
 * Each job gets the queue's default options under its own, as addBulk gives them.
 */
class WakeUpQueue extends Queue<WakeUpJob | WakeUpBatch, void, string> {
  async addWithPointers(
    jobs: readonly BulkJob[],
    pointers: readonly (readonly [string, string])[],
    prefix: string,
  ): Promise<void> {
    // Resolves once the connection is ready: it refuses commands before (no offline queue).
    const client = await this.client;
    const pipeline = client.pipeline();
    // On our ioredis connection (asBullConnection) BullMQ's pipeline is ioredis's own.
    const commands = pipeline as unknown as ChainableCommander;
    for (const [taskId, jobId] of pointers)
      commands.set(latestJobKey(prefix, taskId), jobId, 'PX', LATEST_JOB_TTL_MS);
    for (const { name, data, opts } of jobs) {
      const job = new this.Job(this, name, data, { ...this.jobsOpts, ...opts }, opts.jobId);
      // Queued on the pipeline at once, as BullMQ's Job.createBulk does; its outcome is exec's.
      job.addJob(pipeline, { parentDependenciesKey: '' }).catch(() => undefined);
    }
    const results = (await pipeline.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
  }
}
