import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import {
  TASK_QUEUE_NAME,
  createConsumerHeartbeatReader,
  createTaskQueue,
  type TaskQueue,
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
  type TaskService,
  describeConnectionFailure,
  maskPassword,
} from '@mcp-tasks/store';
import {
  TOOL_PACKS,
  createToolCatalogue,
  loadToolModules,
  type ToolCatalogue,
} from '@mcp-tasks/tools';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { createGatewayApp } from './app.js';
import { createAuthenticator, type Authenticator } from './auth/index.js';
import { consoleFromConfig } from './console/config.js';
import type { GatewayConfig } from './env.js';
import type { GatewayVariables } from './http/gateway-variables.js';
import { createMetrics } from './metrics.js';
import { startTenantQuotas } from './quotas/index.js';
import { StartupError } from './startup-errors.js';
import { createTaskChangeFeed } from './task-feed.js';
import { watchWorkerLiveness } from './worker-liveness.js';

export interface GatewayOptions {
  config: GatewayConfig;
  logger: Logger;
  /** Where relative MCP_TOOL_MODULES paths start; default the process's working directory. */
  baseDir?: string;
}

/** One gateway process's parts: connected and checked, serving nothing until `listen()`. */
export interface Gateway {
  /** The HTTP app (app.ts) the server serves. */
  readonly app: Hono<GatewayVariables>;
  /** Aborted first on shutdown: /readyz fails while requests are still served normally. */
  readonly notReady: AbortController;
  /** Aborted after the readiness delay: new /mcp requests get 503, listen streams end. */
  readonly draining: AbortController;
  /** Serves the app on PORT/HOST; logs where it listens (and where the console is). */
  listen(): Server;
  /** Requests whose handlers are still running (their sockets may already be cut). */
  inFlight(): number;
  /** Closes the liveness watch, sends the wake-ups still due, closes feed, queue, quotas, pools. */
  close(): Promise<void>;
}

/** The start-up warnings an operator should see before anything else is said. */
function warnAboutDevSettings(config: GatewayConfig, logger: Logger): void {
  if (config.requestStateSecretIsDevDefault) {
    logger.warn(
      'REQUEST_STATE_SECRET is unset: using the built-in development secret (allowed only with MCP_AUTH=none)',
    );
  }
  if (config.auth.mode === 'none') {
    logger.warn('MCP_AUTH=none: every caller is tenant "default", principal "anonymous"');
  }
}

async function loadCatalogue(config: GatewayConfig, baseDir: string): Promise<ToolCatalogue> {
  try {
    return createToolCatalogue({
      packs: config.toolPacks ?? [...TOOL_PACKS],
      modules: await loadToolModules(config.toolModules ?? [], { baseDir }),
    });
  } catch (error) {
    throw new StartupError(
      `invalid configuration:\n  - MCP_TOOL_PACKS/MCP_TOOL_MODULES: ${(error as Error).message}`,
    );
  }
}

interface Databases {
  db: Db;
  readDb: Db | undefined;
  close(): Promise<void>;
}

/**
 * The primary pool (and the read replicas' when DATABASE_READ_URL is set), migrated when
 * MCP_MIGRATE_ON_START is on, and checked: a schema this build understands, statement timeouts
 * a pooler keeps. Fails with a StartupError after closing what it opened.
 */
async function openDatabases(config: GatewayConfig, logger: Logger): Promise<Databases> {
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
  const close = async (): Promise<void> => {
    await Promise.allSettled([db.destroy(), readDb?.destroy()]);
  };
  let timeoutProblem: string | undefined;
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
    timeoutProblem = await statementTimeoutProblem(db, {
      variable: 'DATABASE_URL',
      pooler: database.pooler,
    });
    if (timeoutProblem === undefined) {
      // What a failover of the primary could lose, said once (docs/failover.md).
      const durability = await readReplicationDurability(db);
      logger.info(durability, describeReplicationDurability(durability));
    }
  } catch (error) {
    const described =
      describeConnectionFailure('DATABASE_URL', database.url, error) ??
      describePoolerRefusal('DATABASE_URL', error);
    if (described === undefined) logger.fatal({ err: error }, 'database schema check failed');
    await close();
    throw new StartupError(described ?? 'database schema check failed', described === undefined);
  }
  if (timeoutProblem !== undefined) {
    await close();
    throw new StartupError(timeoutProblem);
  }
  return { db, readDb, close };
}

/**
 * Fail fast: the producer connection never queues commands, so an unreachable Redis would
 * otherwise only show as "Stream isn't writeable" on the first enqueue.
 */
async function probeRedisAtStart(config: GatewayConfig): Promise<void> {
  try {
    await probeRedis(config.redis);
  } catch (error) {
    const described = isClusterEndpoint(config.redis)
      ? undefined
      : describeConnectionFailure('REDIS_URL', config.redis.url, error);
    const variable = isClusterEndpoint(config.redis) ? 'REDIS_CLUSTER_NODES' : 'REDIS_URL';
    throw new StartupError(
      described ??
        `${describeRedisEndpoint(config.redis)}: ${(error as Error).message}. Check that Redis is running there and ${variable} is right.`,
    );
  }
}

/**
 * Fetches the identity provider's keys once at startup, in the background: a provider that is
 * down is logged (and fails /readyz) but never keeps the gateway from starting, so a provider
 * outage cannot turn into a crash loop of every replica.
 */
function warmUpIdentityProvider(auth: Authenticator, config: GatewayConfig, logger: Logger): void {
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

/** Whether any worker consumes this gateway's queue, watched for /readyz and the log. */
function watchWorkers(config: GatewayConfig, logger: Logger) {
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
  return {
    workerLiveness,
    stop(): void {
      workerLiveness.stop();
      consumerHeartbeats.close();
    },
  };
}

/** The one door into the store, enqueueing wake-ups on `queue` after each create commits. */
function openTaskService(
  config: GatewayConfig,
  dbs: Databases,
  queue: TaskQueue,
  logger: Logger,
): TaskService {
  return createTaskService({
    db: dbs.db,
    readDb: dbs.readDb,
    visibilityTimeoutMs: config.visibilityTimeoutMs,
    maxWaitingCreates: config.createQueueMax,
    maxCreateWaitMs: config.createQueueMaxAgeMs,
    wakeUpLingerMs: config.wakeUpLingerMs,
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
}

/** Handlers still running, counted so shutdown does not close the pools under them. */
function countInFlight(fetch: Hono<GatewayVariables>['fetch']): {
  fetch: Hono<GatewayVariables>['fetch'];
  inFlight: () => number;
} {
  let inFlight = 0;
  return {
    fetch: async (...args) => {
      inFlight += 1;
      try {
        return await fetch(...args);
      } finally {
        inFlight -= 1;
      }
    },
    inFlight: () => inFlight,
  };
}

/** Where the gateway listens, and where an operator goes (docker compose up shows this line). */
function logListening(
  logger: Logger,
  config: GatewayConfig,
  consoleSettings: ReturnType<typeof consoleFromConfig>,
  info: AddressInfo,
): void {
  logger.info({ host: info.address, port: info.port, auth: config.auth.mode }, 'gateway listening');
  // Never the credentials.
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
}

/**
 * Wiring only: every behaviour lives in the modules imported above. Fails with a StartupError
 * (one line for the operator) when the tool configuration is wrong, DATABASE_URL or Redis cannot
 * be reached, or the schema is one this build does not understand.
 */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, logger } = options;
  warnAboutDevSettings(config, logger);
  const catalogue = await loadCatalogue(config, options.baseDir ?? process.cwd());
  const dbs = await openDatabases(config, logger);
  try {
    await probeRedisAtStart(config);
  } catch (error) {
    await dbs.close();
    throw error;
  }
  const queue = createTaskQueue({ redis: config.redis, prefix: config.redisPrefix });
  const taskService = openTaskService(config, dbs, queue, logger);
  // LISTEN needs a session: a transaction pooler would deliver no notification.
  const changes = await createTaskChangeFeed({
    connectionString: config.database.directUrl,
    logger,
  });
  const workers = watchWorkers(config, logger);
  const auth = createAuthenticator(config.auth);
  warmUpIdentityProvider(auth, config, logger);
  const notReady = new AbortController();
  const draining = new AbortController();
  const metrics = createMetrics({ collectDefaults: true });
  const quotas = startTenantQuotas({
    limits: config.tenantLimits,
    db: dbs.db,
    redis: config.redis,
    redisPrefix: config.redisPrefix,
    metrics,
    logger,
  });
  const consoleSettings = consoleFromConfig(config);
  const app = createGatewayApp({
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
    workerLiveness: workers.workerLiveness,
    console: consoleSettings,
    admission: quotas.admission,
    resourceMetadata: config.auth.mode === 'jwt' ? config.auth.resourceMetadata : undefined,
  });

  const counted = countInFlight(app.fetch);

  return {
    app,
    notReady,
    draining,
    inFlight: counted.inFlight,
    listen: () =>
      serve({ fetch: counted.fetch, port: config.port, hostname: config.host }, (info) =>
        logListening(logger, config, consoleSettings, info),
      ) as Server,
    async close() {
      workers.stop();
      // Creates answered just before the drain have their wake-ups still to send; without this
      // they would wait for the sweeper's grace. Each is bounded by the queue's command timeout.
      await taskService.settleWakeUps();
      await Promise.allSettled([changes.close(), queue.close(), quotas.close()]);
      await dbs.close();
    },
  };
}
