import {
  createTaskConsumer,
  createTaskQueue,
  startConsumerHeartbeat,
  type ConsumerHeartbeat,
  type TaskConsumer,
  type TaskQueue,
} from '@mcp-tasks/queue';
import {
  assertSchemaCompatible,
  describeReplicationDurability,
  readReplicationDurability,
  createDb,
  createTaskChangeListener,
  TASK_LEASE_CHANGES_CHANNEL,
  createOrphanWaker,
  describeConnectionFailure,
  describePoolerRefusal,
  statementTimeoutProblem,
  type Db,
  type TaskChangeListener,
} from '@mcp-tasks/store';
import { createToolCatalogue, loadToolModules, type ToolCatalogue } from '@mcp-tasks/tools';
import { watchForCancellation, type CancelWatcher } from './attempt/cancellation.js';
import type { WorkerConfig } from './env.js';
import { startHealthServer, type HealthServer } from './health-server.js';
import { createHeldTasks, type HeldTasks } from './attempt/held-tasks.js';
import { createJobHandler } from './attempt/job-handler.js';
import type { Logger } from './logger.js';
import { createWorkerMetrics, type WorkerMetrics } from './metrics.js';
import { createRedisErrorReporter } from './redis-error-reporter.js';
import { createWakeAgain, type WakeAgain } from './attempt/wake-again.js';
import { StartupError } from './startup-errors.js';
import { createStepLog } from './attempt/step-log.js';
import { createSweepWakeUpQueue } from './sweeper/sweep-wake-up-queue.js';
import { createSweeper, type Sweeper } from './sweeper/sweeper.js';
import { createTaskRunner, type TaskRunner } from './attempt/task-runner.js';

export interface WorkerOptions {
  config: WorkerConfig;
  logger: Logger;
  /** Where relative MCP_TOOL_MODULES paths start; default the process's working directory. */
  baseDir?: string;
}

/** One worker process's parts, built but idle until `start()`. */
export interface Worker {
  /** One attempt at a task, as a delivered wake-up runs it (no queue involved). */
  readonly runner: TaskRunner;
  /** Consumes the queue, watches for cancels, sweeps, serves /healthz: the worker takes tasks. */
  start(): Promise<void>;
  /** Tasks this process holds a lease on now. */
  heldCount(): number;
  /**
   * Takes no more work: a wake-up fetched from now on is passed on unclaimed, each running task
   * stops at its next checkpoint and gives its lease back, and /healthz answers 503.
   */
  drain(): void;
  /** Stops the steps still running now (after the grace): they give their lease back. */
  abortRunningSteps(): void;
  /** Drains, stops fetching and sweeping, waits for running handlers, then closes every connection. */
  close(): Promise<void>;
}

/**
 * Wiring only: every behaviour lives in the modules imported above. Fails with a StartupError
 * (one line for the operator) when DATABASE_URL cannot be reached, and refuses a schema this
 * build does not understand.
 */
export async function createWorker(options: WorkerOptions): Promise<Worker> {
  const { config, logger } = options;
  const db = await openDatabase(config, logger);

  const catalogue = createToolCatalogue({
    packs: config.toolPacks,
    modules: await loadToolModules(config.toolModules, {
      baseDir: options.baseDir ?? process.cwd(),
    }),
  });
  const queue = createTaskQueue({ redis: config.redis, prefix: config.redisPrefix });
  const metrics = createWorkerMetrics();
  const heldTasks = createHeldTasks();
  let draining = false;
  const wakeAgain = createWakeAgain({ db, queue });

  const runner = createWorkerRunner(config, {
    db,
    catalogue,
    heldTasks,
    isDraining: () => draining,
    wakeAgain,
    logger,
    metrics,
  });

  const built: BuiltParts = { config, logger, db, catalogue, queue, metrics, heldTasks, wakeAgain };
  // Set by start(); close() stops what was started.
  const started: StartedParts = {};

  function drain(): void {
    draining = true;
    started.health?.markShuttingDown();
  }

  return {
    runner,
    start: () => startWorker(built, runner, started),
    heldCount: () => heldTasks.size(),
    drain,
    abortRunningSteps: () => heldTasks.abortAll('shutdown'),
    close: () => closeWorker(built, started, drain),
  };
}

/** What createWorker builds before start(). */
interface BuiltParts {
  config: WorkerConfig;
  logger: Logger;
  db: Db;
  catalogue: ToolCatalogue;
  queue: TaskQueue;
  metrics: WorkerMetrics;
  heldTasks: HeldTasks;
  wakeAgain: WakeAgain;
}

/** What `Worker.start()` starts, each set once it runs, for close() to stop. */
interface StartedParts {
  listener?: TaskChangeListener;
  cancelWatcher?: CancelWatcher;
  consumer?: TaskConsumer;
  heartbeat?: ConsumerHeartbeat;
  sweeper?: Sweeper;
  health?: HealthServer;
}

/** `Worker.start()`: listens for changes, consumes the queue, sweeps and serves /healthz. */
async function startWorker(
  built: BuiltParts,
  runner: TaskRunner,
  started: StartedParts,
): Promise<void> {
  const { config, logger, db, catalogue, queue, metrics, heldTasks, wakeAgain } = built;
  // The listener reports reconnects before the watcher exists; the watcher subscribes to it after.
  // LISTEN and the sweeper's session lock need a session: the direct URL, never a pooler's.
  // Only cancel requests and expiries: the re-read each notification costs is then never spent on
  // a listen stream's changes, most of them this worker's own checkpoints (migration 0025).
  const listener = await createTaskChangeListener({
    connectionString: config.database.directUrl,
    channel: TASK_LEASE_CHANGES_CHANNEL,
    onError: (error) => logger.warn({ err: error }, 'change listener error'),
    onReconnect: () => started.cancelWatcher?.recheckAll(),
  });
  started.listener = listener;
  started.cancelWatcher = watchForCancellation({
    db,
    listener,
    heldTasks,
    logger,
    onRecheck: () => metrics.feedRechecks.inc(),
  });

  const consumer = createWorkerConsumer(config, { runner, wakeAgain, logger, metrics });
  started.consumer = consumer;
  await consumer.waitUntilReady();
  // Tells gateways on this REDIS_PREFIX that someone consumes their queue (they warn otherwise).
  started.heartbeat = startConsumerHeartbeat({
    redis: config.redis,
    prefix: config.redisPrefix,
    consumerId: config.workerId,
  });

  const sweeper = createWorkerSweeper({ config, db, queue, logger, metrics });
  started.sweeper = sweeper;
  sweeper.start();

  if (config.metricsPort !== 0) {
    started.health = await startHealthServer({
      port: config.metricsPort,
      registry: metrics.registry,
    });
  }
  logReady(config, catalogue, logger);
}

/** `Worker.close()`: drains, stops fetching and sweeping, waits for handlers, closes connections. */
async function closeWorker(
  built: BuiltParts,
  started: StartedParts,
  drain: () => void,
): Promise<void> {
  drain();
  // Stop fetching first (close() does so at once, then waits for running handlers); a sweep
  // in flight must not keep this worker taking jobs it would only hand back.
  started.heartbeat?.stop();
  await Promise.all([started.consumer?.close(), started.sweeper?.stop()]);
  started.cancelWatcher?.stop();
  await started.listener?.close();
  await built.queue.close();
  await built.db.destroy();
  await started.health?.close();
}

/**
 * The worker's pool, checked before anything else starts: the schema this build understands, the
 * statement bound, and what a failover could lose (said once). A failure is a StartupError with
 * one line for the operator when it can be described.
 */
async function openDatabase(config: WorkerConfig, logger: Logger): Promise<Db> {
  const { database } = config;
  const db = createDb({
    connectionString: database.url,
    max: config.concurrency + 4,
    applicationName: `mcp-tasks worker ${config.workerId}`,
    idleTimeoutMs: config.databasePoolIdleTimeoutMs,
    pooler: database.pooler,
    preparedStatements: database.preparedStatements,
  });
  try {
    await assertSchemaCompatible(db);
    const timeoutProblem = await statementTimeoutProblem(db, {
      variable: 'DATABASE_URL',
      pooler: database.pooler,
    });
    if (timeoutProblem !== undefined) throw new StartupError(timeoutProblem);
    // What a failover of the primary could lose, said once (docs/failover.md).
    const durability = await readReplicationDurability(db);
    logger.info(durability, describeReplicationDurability(durability));
  } catch (error) {
    const described =
      describeConnectionFailure('DATABASE_URL', database.url, error) ??
      describePoolerRefusal('DATABASE_URL', error);
    await db.destroy();
    if (described === undefined) throw error;
    throw new StartupError(described);
  }
  return db;
}

/** The sweeper with its own door into the store (createOrphanWaker) and its view of the queue. */
function createWorkerSweeper(options: {
  config: WorkerConfig;
  db: Db;
  queue: TaskQueue;
  logger: Logger;
  metrics: WorkerMetrics;
}): Sweeper {
  const { config, db, queue, logger, metrics } = options;
  return createSweeper({
    connectionString: config.database.directUrl,
    db,
    orphans: createOrphanWaker({
      db,
      wakeUpQueue: createSweepWakeUpQueue(queue),
      wakeUpGraceMs: config.wakeUpGraceMs,
      onWakeUpError: (taskId, error) =>
        logger.warn({ err: error, taskId }, 'sweeper could not re-dispatch'),
      onSweepBatchError: (taskIds, error) =>
        logger.warn({ err: error, tasks: taskIds.length }, 'sweeper could not re-dispatch a batch'),
    }),
    intervalMs: config.sweepIntervalMs,
    batchSize: config.sweepBatchSize,
    stepBudgetMs: config.sweepStepBudgetMs,
    // Holders retry giving their leases back every 250 ms once Postgres answers again.
    holderGraceMs: config.leaseMs,
    leaderTimeoutMs: config.sweepLeaderTimeoutMs,
    retentionMs: config.taskRetentionMs,
    workerId: config.workerId,
    logger,
    metrics,
  });
}

/** The task runner with this worker's configuration. */
function createWorkerRunner(
  config: WorkerConfig,
  parts: {
    db: Db;
    catalogue: ToolCatalogue;
    heldTasks: HeldTasks;
    isDraining: () => boolean;
    wakeAgain: WakeAgain;
    logger: Logger;
    metrics: WorkerMetrics;
  },
): TaskRunner {
  const { db, catalogue, heldTasks, isDraining, wakeAgain, logger, metrics } = parts;
  return createTaskRunner({
    db,
    catalogue,
    workerId: config.workerId,
    leaseMs: config.leaseMs,
    retry: config.retry,
    settings: { reportStepMs: config.reportStepMs },
    toolMissingFailAfterMs: config.toolMissingFailAfterMs,
    heldTasks,
    isDraining,
    wakeAgain,
    logger,
    metrics,
    stepLog: config.stepLog ? createStepLog(logger) : undefined,
    tracing: config.tracing?.enabled === true,
  });
}

/** The queue consumer with this worker's configuration; each wake-up goes to the job handler. */
function createWorkerConsumer(
  config: WorkerConfig,
  parts: { runner: TaskRunner; wakeAgain: WakeAgain; logger: Logger; metrics: WorkerMetrics },
): TaskConsumer {
  const { runner, wakeAgain, logger, metrics } = parts;
  return createTaskConsumer({
    redis: config.redis,
    prefix: config.redisPrefix,
    concurrency: config.concurrency,
    // Redeliver a dead worker's job on the lease's time scale; the lease decides who works.
    lockDurationMs: Math.max(1_000, Math.floor(config.leaseMs / 2)),
    handle: createJobHandler({ runner, wakeAgain, leaseMs: config.leaseMs, logger, metrics }),
    onInvalidPayload: (jobId, issues) =>
      logger.warn({ jobId, issues }, 'dropped a job with an invalid payload'),
    onStall: (stall) =>
      logger.warn(
        stall,
        'the queue consumer took no wake-up while one waited; replaced its BullMQ worker',
      ),
    onError: createRedisErrorReporter({ redis: config.redis, logger }),
  });
}

/** The 'worker ready' line: what this worker runs with. */
function logReady(config: WorkerConfig, catalogue: ToolCatalogue, logger: Logger): void {
  logger.info(
    {
      concurrency: config.concurrency,
      packs: config.toolPacks,
      modules: config.toolModules,
      tools: catalogue.list().map((tool) => tool.name),
      leaseMs: config.leaseMs,
    },
    'worker ready',
  );
}
