import { createTaskConsumer, createTaskQueue, startConsumerHeartbeat } from '@mcp-tasks/queue';
import {
  assertSchemaCompatible,
  createDb,
  createTaskChangeListener,
  createTaskService,
  describeConnectionFailure,
} from '@mcp-tasks/store';
import { createToolCatalogue, loadToolModules } from '@mcp-tasks/tools';
import { watchForCancellation, type CancelWatcher } from './cancel-watcher.js';
import { EnvError, parseEnv, type WorkerEnv } from './env.js';
import { startHealthServer, type HealthServer } from './health-server.js';
import { createHeldTasks } from './held-tasks.js';
import { createJobHandler } from './job-handler.js';
import { createLogger } from './logger.js';
import { createWorkerMetrics } from './metrics.js';
import { createRedisErrorReporter } from './redis-error-reporter.js';
import { createRequeue } from './requeue.js';
import { createSweepDispatcher } from './sweep-dispatcher.js';
import { StartupError, describeStartupError } from './startup-errors.js';
import { createSweeper } from './sweeper.js';
import { createStepLog } from './step-log.js';
import { createTaskRunner } from './task-runner.js';

// Wiring only: every behaviour lives in the modules imported above.

function loadEnv(): WorkerEnv {
  try {
    return parseEnv(process.env);
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
const env = loadEnv();

const logger = createLogger({ level: env.LOG_LEVEL, workerId: env.WORKER_ID });
process.on('unhandledRejection', (reason) => {
  logger.fatal({ err: reason }, 'unhandled rejection');
  process.exit(1);
});

async function main(env: WorkerEnv): Promise<void> {
  const db = createDb({
    connectionString: env.DATABASE_URL,
    max: env.WORKER_CONCURRENCY + 4,
    applicationName: `mcp-tasks worker ${env.WORKER_ID}`,
  });
  try {
    await assertSchemaCompatible(db);
  } catch (error) {
    const described = describeConnectionFailure('DATABASE_URL', env.DATABASE_URL, error);
    if (described === undefined) throw error;
    await db.destroy();
    throw new StartupError(described);
  }

  const catalogue = createToolCatalogue({
    packs: env.MCP_TOOL_PACKS,
    modules: await loadToolModules(env.MCP_TOOL_MODULES, { baseDir: process.cwd() }),
  });
  const queue = createTaskQueue({ redisUrl: env.REDIS_URL, prefix: env.REDIS_PREFIX });
  const metrics = createWorkerMetrics();
  const heldTasks = createHeldTasks();
  let draining = false;
  const requeue = createRequeue({ db, queue });

  const runner = createTaskRunner({
    db,
    catalogue,
    workerId: env.WORKER_ID,
    leaseMs: env.LEASE_MS,
    retry: {
      maxAttempts: env.MAX_ATTEMPTS,
      baseDelayMs: env.RETRY_BASE_DELAY_MS,
      maxDelayMs: env.RETRY_MAX_DELAY_MS,
    },
    settings: { reportStepMs: env.REPORT_STEP_MS },
    toolMissingFailAfterMs: env.TOOL_MISSING_FAIL_AFTER_MS,
    heldTasks,
    isDraining: () => draining,
    requeue,
    logger,
    metrics,
    stepLog: env.STEP_LOG === 'on' ? createStepLog(logger) : undefined,
  });

  // The listener reports reconnects before the watcher exists; the watcher subscribes to it after.
  const watcherRef: { current?: CancelWatcher } = {};
  const listener = await createTaskChangeListener({
    connectionString: env.DATABASE_URL,
    onError: (error) => logger.warn({ err: error }, 'change listener error'),
    onReconnect: () => watcherRef.current?.recheckAll(),
  });
  const cancelWatcher = watchForCancellation({ db, listener, heldTasks, logger });
  watcherRef.current = cancelWatcher;

  const consumer = createTaskConsumer({
    redisUrl: env.REDIS_URL,
    prefix: env.REDIS_PREFIX,
    concurrency: env.WORKER_CONCURRENCY,
    // Redeliver a dead worker's job on the lease's time scale; the lease decides who works.
    lockDurationMs: Math.max(1_000, Math.floor(env.LEASE_MS / 2)),
    handle: createJobHandler({ runner, requeue, leaseMs: env.LEASE_MS, logger, metrics }),
    onInvalidPayload: (jobId, issues) =>
      logger.warn({ jobId, issues }, 'dropped a job with an invalid payload'),
    onError: createRedisErrorReporter({ redisUrl: env.REDIS_URL, logger }),
  });
  await consumer.waitUntilReady();
  // Tells gateways on this REDIS_PREFIX that someone consumes their queue (they warn otherwise).
  const heartbeat = startConsumerHeartbeat({
    redisUrl: env.REDIS_URL,
    prefix: env.REDIS_PREFIX,
    consumerId: env.WORKER_ID,
  });

  const sweeper = createSweeper({
    connectionString: env.DATABASE_URL,
    db,
    taskService: createTaskService({
      db,
      dispatcher: createSweepDispatcher(queue),
      enqueueGraceMs: env.ENQUEUE_GRACE_MS,
      onDispatchError: (taskId, error) =>
        logger.warn({ err: error, taskId }, 'sweeper could not re-dispatch'),
      onSweepBatchError: (taskIds, error) =>
        logger.warn({ err: error, tasks: taskIds.length }, 'sweeper could not re-dispatch a batch'),
    }),
    intervalMs: env.SWEEP_INTERVAL_MS,
    batchSize: env.SWEEP_BATCH_SIZE,
    stepBudgetMs: env.SWEEP_STEP_BUDGET_MS,
    // Holders retry giving their leases back every 250 ms once Postgres answers again.
    holderGraceMs: env.LEASE_MS,
    retentionMs: env.TASK_RETENTION_MS,
    logger,
    metrics,
  });
  sweeper.start();

  let health: HealthServer | undefined;
  if (env.METRICS_PORT !== 0) {
    health = await startHealthServer({ port: env.METRICS_PORT, registry: metrics.registry });
  }
  logger.info(
    {
      concurrency: env.WORKER_CONCURRENCY,
      packs: env.MCP_TOOL_PACKS,
      modules: env.MCP_TOOL_MODULES,
      tools: catalogue.list().map((tool) => tool.name),
      leaseMs: env.LEASE_MS,
    },
    'worker ready',
  );

  let shuttingDown = false;
  async function shutdown(signal: string): Promise<void> {
    if (shuttingDown) return;
    shuttingDown = true;
    const graceMs = env.SHUTDOWN_GRACE_MS;
    logger.info({ signal, held: heldTasks.size(), graceMs }, 'shutting down');
    // Stop taking jobs; running tasks stop at their next checkpoint and give their lease back.
    draining = true;
    health?.markShuttingDown();
    const graceTimer = setTimeout(() => heldTasks.abortAll('shutdown'), graceMs);
    const lastResort = setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, graceMs + 10_000);
    lastResort.unref();
    try {
      // Stop fetching first (close() does so at once, then waits for running handlers); a sweep
      // in flight must not keep this worker taking jobs it would only hand back.
      heartbeat.stop();
      await Promise.all([consumer.close(), sweeper.stop()]);
      clearTimeout(graceTimer);
      cancelWatcher.stop();
      await listener.close();
      await queue.close();
      await db.destroy();
      await health?.close();
      logger.info('stopped');
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main(env).catch((error: unknown) => {
  const described =
    error instanceof StartupError ? error.message : describeStartupError(error, env);
  if (described !== undefined) process.stderr.write(`${described}\n`);
  else logger.fatal({ err: error }, 'worker failed to start');
  process.exit(1);
});
