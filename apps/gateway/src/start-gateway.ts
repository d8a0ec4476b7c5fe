import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import {
  TASK_QUEUE_NAME,
  createConsumerHeartbeatReader,
  createTaskQueue,
  describeRedisEndpoint,
  effectivePrefix,
  isClusterEndpoint,
  probeRedis,
} from '@mcp-tasks/queue';
import {
  assertSchemaCompatible,
  describeReplicationDurability,
  readReplicationDurability,
  createDb,
  createSpreadDb,
  createTaskService,
  describePoolerRefusal,
  statementTimeoutProblem,
  migrateToLatest,
  type Db,
  describeConnectionFailure,
  maskPassword,
} from '@mcp-tasks/store';
import {
  TOOL_PACKS,
  createToolCatalogue,
  loadToolModules,
  type ToolCatalogue,
} from '@mcp-tasks/tools';
import type { RunningTracing } from '@mcp-tasks/tracing';
import { pino, type Logger } from 'pino';
import { createGateway } from './app.js';
import { createAuthenticator } from './auth/index.js';
import { consoleFromConfig } from './console/config.js';
import { parseEnv, type GatewayConfig } from './env.js';
import { createMetrics } from './metrics.js';
import { startTenantQuotas } from './quotas/index.js';
import { createShutdown } from './shutdown.js';
import { describeListenFailure } from './startup-errors.js';
import { createTaskChangeFeed } from './task-feed.js';
import { watchWorkerLiveness } from './worker-liveness.js';

/**
 * Fetches the identity provider's keys once at startup, in the background: a provider that is
 * down is logged (and fails /readyz) but never keeps the gateway from starting, so a provider
 * outage cannot turn into a crash loop of every replica.
 */
function warmUpIdentityProvider(
  auth: ReturnType<typeof createAuthenticator>,
  config: GatewayConfig,
  logger: Logger,
): void {
  if (config.auth.mode === 'jwt' && config.auth.resourceMetadata === undefined) {
    logger.warn(
      'MCP_AUTH=jwt without MCP_RESOURCE_URL (or a URL as MCP_JWT_AUDIENCE) and an issuer: no OAuth Protected Resource Metadata is served, so stock MCP clients cannot find where to log in',
    );
  }
  auth.ready?.().then(
    () => logger.info('identity provider keys fetched'),
    (error: unknown) =>
      logger.warn(
        { err: error },
        `identity provider unreachable, /readyz fails until it answers: ${(error as Error).message}`,
      ),
  );
}

/** Wiring only: env → dependencies → app → node server, and the way back out on SIGTERM. */
async function main(tracing: RunningTracing | undefined): Promise<void> {
  const parsed = parseEnv(process.env);
  if (!parsed.ok) {
    process.stderr.write(
      `gateway: invalid configuration:\n${parsed.problems.map((problem) => `  - ${problem}`).join('\n')}\n`,
    );
    process.exit(1);
  }
  const config = parsed.config;
  const logger = pino({ level: config.logLevel, base: { service: 'gateway', pid: process.pid } });
  if (config.requestStateSecretIsDevDefault) {
    logger.warn(
      'REQUEST_STATE_SECRET is unset: using the built-in development secret (allowed only with MCP_AUTH=none)',
    );
  }
  if (config.auth.mode === 'none') {
    logger.warn('MCP_AUTH=none: every caller is tenant "default", principal "anonymous"');
  }

  let catalogue: ToolCatalogue;
  try {
    catalogue = createToolCatalogue({
      packs: config.toolPacks ?? [...TOOL_PACKS],
      modules: await loadToolModules(config.toolModules ?? [], { baseDir: process.cwd() }),
    });
  } catch (error) {
    process.stderr.write(
      `gateway: invalid configuration:\n  - MCP_TOOL_PACKS/MCP_TOOL_MODULES: ${(error as Error).message}\n`,
    );
    process.exit(1);
  }

  const { database } = config;
  const pooling = { pooler: database.pooler, preparedStatements: database.preparedStatements };
  const db = createDb({
    connectionString: database.url,
    applicationName: 'mcp-tasks-gateway',
    idleTimeoutMs: config.databasePoolIdleTimeoutMs,
    ...pooling,
  });
  const readDb: Db | undefined =
    config.databaseReadUrls.length === 0
      ? undefined
      : createSpreadDb(config.databaseReadUrls, {
          applicationName: 'mcp-tasks-gateway-read',
          idleTimeoutMs: config.databasePoolIdleTimeoutMs,
          ...pooling,
        });
  const closeDbs = async (): Promise<void> => {
    await Promise.allSettled([db.destroy(), readDb?.destroy()]);
  };
  try {
    if (config.migrateOnStart) {
      // Its own pool without statement timeouts: replicas starting together wait for each
      // other's migration lock, which may take longer than a request-path query may. On the
      // direct URL: the lock is a session lock, which a transaction pooler cannot hold.
      const migrationDb = createDb({
        connectionString: database.directUrl,
        max: 1,
        applicationName: 'mcp-tasks-gateway-migrate',
        statementTimeoutMs: 0,
      });
      try {
        const { applied } = await migrateToLatest(migrationDb);
        logger.info({ applied }, 'migrations applied (MCP_MIGRATE_ON_START=true)');
      } finally {
        await migrationDb.destroy();
      }
    }
    // Refuse to serve a schema this build does not understand (a newer release migrated it).
    await assertSchemaCompatible(db);
    const timeoutProblem = await statementTimeoutProblem(db, {
      variable: 'DATABASE_URL',
      pooler: database.pooler,
    });
    if (timeoutProblem !== undefined) {
      process.stderr.write(`gateway: ${timeoutProblem}\n`);
      await closeDbs();
      process.exit(1);
    }
    // What a failover of the primary could lose, said once (docs/failover.md).
    const durability = await readReplicationDurability(db);
    logger.info(durability, describeReplicationDurability(durability));
  } catch (error) {
    const described =
      describeConnectionFailure('DATABASE_URL', database.url, error) ??
      describePoolerRefusal('DATABASE_URL', error);
    if (described !== undefined) process.stderr.write(`gateway: ${described}\n`);
    else logger.fatal({ err: error }, 'database schema check failed');
    await closeDbs();
    process.exit(1);
  }

  // Fail fast: the producer connection never queues commands, so an unreachable Redis would
  // otherwise only show as "Stream isn't writeable" on the first enqueue.
  try {
    await probeRedis(config.redis);
  } catch (error) {
    const described = isClusterEndpoint(config.redis)
      ? undefined
      : describeConnectionFailure('REDIS_URL', config.redis.url, error);
    const variable = isClusterEndpoint(config.redis) ? 'REDIS_CLUSTER_NODES' : 'REDIS_URL';
    process.stderr.write(
      `gateway: ${described ?? `${describeRedisEndpoint(config.redis)}: ${(error as Error).message}. Check that Redis is running there and ${variable} is right.`}\n`,
    );
    await closeDbs();
    process.exit(1);
  }
  const queue = createTaskQueue({ redis: config.redis, prefix: config.redisPrefix });
  const taskService = createTaskService({
    db,
    readDb,
    visibilityTimeoutMs: config.visibilityTimeoutMs,
    maxWaitingCreates: config.createQueueMax,
    maxCreateWaitMs: config.createQueueMaxAgeMs,
    wakeUpQueue: queue,
    onWakeUpError: (taskId, error) =>
      logger.warn(
        { err: error, taskId },
        'enqueue failed after commit; the sweeper will dispatch the task',
      ),
    onWithdrawGiveUp: (taskIds, error) =>
      logger.error(
        { err: error, taskIds },
        'could not withdraw failed creates within MCP_VISIBILITY_TIMEOUT_MS; they may run',
      ),
  });
  // LISTEN needs a session: a transaction pooler would deliver no notification.
  const changes = await createTaskChangeFeed({ connectionString: database.directUrl, logger });
  const consumerHeartbeats = createConsumerHeartbeatReader({
    redis: config.redis,
    prefix: config.redisPrefix,
  });
  const workerLiveness = watchWorkerLiveness({
    reader: consumerHeartbeats,
    prefix: effectivePrefix(config.redis, config.redisPrefix),
    prefixIsDefault: config.redisPrefix === undefined,
    queueName: TASK_QUEUE_NAME,
    redisSettingForLog: isClusterEndpoint(config.redis)
      ? `REDIS_CLUSTER_NODES (${config.redis.clusterNodes.map((node) => `${node.host}:${node.port}`).join(',')})`
      : `REDIS_URL (${maskPassword(config.redis.url)})`,
    logger,
  });
  workerLiveness.start();
  const auth = createAuthenticator(config.auth);
  warmUpIdentityProvider(auth, config, logger);
  const notReady = new AbortController();
  const draining = new AbortController();
  const metrics = createMetrics({ collectDefaults: true });
  const quotas = startTenantQuotas({
    limits: config.tenantLimits,
    db,
    redis: config.redis,
    redisPrefix: config.redisPrefix,
    metrics,
    logger,
  });
  const consoleSettings = consoleFromConfig(config);
  const app = createGateway({
    taskService,
    queue,
    catalogue,
    auth,
    changes,
    logger,
    config,
    metrics,
    shutdownSignal: draining.signal,
    notReadySignal: notReady.signal,
    workerLiveness,
    console: consoleSettings,
    admission: quotas.admission,
    resourceMetadata: config.auth.mode === 'jwt' ? config.auth.resourceMetadata : undefined,
  });

  // Handlers still running, counted so shutdown does not close the pools under them.
  let inFlight = 0;
  const fetch: typeof app.fetch = async (...args) => {
    inFlight += 1;
    try {
      return await app.fetch(...args);
    } finally {
      inFlight -= 1;
    }
  };
  const server = serve({ fetch, port: config.port, hostname: config.host }, (info) => {
    logger.info(
      { host: info.address, port: info.port, auth: config.auth.mode },
      'gateway listening',
    );
    // Where an operator goes (docker compose up shows this line); never the credentials.
    if (consoleSettings !== undefined)
      logger.info(
        {
          path: '/console',
          port: info.port,
          operators: consoleSettings.operators.length,
          jwtRoleClaim: consoleSettings.jwtLogin?.roleClaim,
        },
        `operator console at http://${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}/console (log in with an MCP_CONSOLE_TOKENS token${consoleSettings.jwtLogin === undefined ? '' : ' or a JWT'})`,
      );
  }) as Server;
  server.once('error', (error) => {
    const described = describeListenFailure(error, { port: config.port, host: config.host });
    if (described === undefined) throw error;
    process.stderr.write(`gateway: ${described}\n`);
    process.exit(1);
  });

  const stop = createShutdown({
    server,
    logger,
    notReady,
    draining,
    inFlight: () => inFlight,
    readinessDelayMs: config.shutdownDelayMs,
    graceMs: config.shutdownGraceMs,
    closeResources: async () => {
      workerLiveness.stop();
      consumerHeartbeats.close();
      // Creates answered just before the drain have their wake-ups still to send; without this
      // they would wait for the sweeper's grace. Each is bounded by the queue's command timeout.
      await taskService.settleWakeUps();
      await Promise.allSettled([changes.close(), queue.close(), quotas.close()]);
      await closeDbs();
      // Last: the spans of the drain itself are sent too.
      await tracing?.shutdown();
    },
    exit: (code) => process.exit(code),
  });
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

export function startGateway(tracing: RunningTracing | undefined): void {
  main(tracing).catch((error: unknown) => {
    process.stderr.write(
      `gateway: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
