import { ErrorCode, type Implementation } from '@mcp-tasks/protocol';
import type { TaskService } from '@mcp-tasks/store';
import type { ToolCatalogue } from '@mcp-tasks/tools';
import { Hono } from 'hono';
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { Authenticator } from './auth/index.js';
import { protectedResourceMetadata, resourceMetadataPaths } from './auth/resource-metadata.js';
import type { GatewayConfig, ResourceMetadataConfig } from './env.js';
import { HttpProtocolError } from './errors.js';
import { mcpAccessLog, requestContext } from './http/access-log.js';
import { errorReply } from './http/error-reply.js';
import { addHealthRoutes } from './http/readiness.js';
import type { GatewayVariables } from './http/gateway-variables.js';
import type { McpServices } from './mcp/context.js';
import { handleMcpPost } from './mcp/endpoint.js';
import {
  DEFAULT_LISTEN_LIMITS,
  createLoadQueue,
  createStreamSlots,
  type ListenLimits,
} from './mcp/listen-limits.js';
import { createListenStatements } from './mcp/listen-statements.js';
import { createPollLimits } from './mcp/poll-rate-limit.js';
import { createMetrics, type GatewayMetrics } from './metrics.js';
import { createRequestStateCodec } from './mrtr/request-state.js';
import type { TaskChangeFeed } from './task-feed.js';
import type { WorkerLiveness } from './worker-liveness.js';
import { ADMIT_EVERYONE, type TenantAdmission } from './quotas/tenant-admission.js';
import { createEventTail } from './console/event-tail.js';
import type { ConsoleJwtLogin } from './console/jwt-login.js';
import type { LoginLimits } from './console/login-limiter.js';
import type { ConsoleOperator } from './console/operators.js';
import { createConsoleRoutes } from './console/routes.js';
import { createSessionKeeper } from './console/session.js';

export const SERVER_INFO: Implementation = { name: 'mcp-tasks-gateway', version: '0.1.0' };

/** The configuration the app itself uses (main owns ports, URLs and pools). */
export type GatewayAppConfig = Pick<
  GatewayConfig,
  | 'requestStateSecret'
  | 'requestStateTtlMs'
  | 'maxBodyBytes'
  | 'pollRateLimit'
  | 'requestTimeoutMs'
  | 'allowedOrigins'
  | 'taskTtlMs'
  | 'taskPollIntervalMs'
  | 'sseKeepAliveMs'
  | 'tracing'
> & { listenLimits?: ListenLimits };

export interface GatewayAppOptions {
  /** The one door into the store: reads, writes and the database readiness checks. */
  taskService: TaskService;
  /** Only readiness is asked of the queue here; the task service enqueues. */
  queue: { ping(): Promise<void> };
  catalogue: ToolCatalogue;
  auth: Authenticator;
  changes: TaskChangeFeed;
  logger: Logger;
  config: GatewayAppConfig;
  metrics?: GatewayMetrics;
  /** Abort to drain: new /mcp requests get 503, /readyz fails, listen streams end gracefully. */
  shutdownSignal?: AbortSignal;
  /**
   * Abort to fail /readyz only, ahead of `shutdownSignal`: a load balancer stops routing here
   * while requests (and listen streams) are still served.
   */
  notReadySignal?: AbortSignal;
  serverInfo?: Implementation;
  /** Cache hint of server/discover and tools/list (ms). */
  listTtlMs?: number;
  /** Adds whether any worker consumes this gateway's queue to /readyz (never fails it). */
  workerLiveness?: Pick<WorkerLiveness, 'check'>;
  /** Per-tenant limits on creating tasks (quotas/); none when absent. */
  admission?: TenantAdmission;
  /** Served as RFC 9728 Protected Resource Metadata; absent: those paths are 404. */
  resourceMetadata?: ResourceMetadataConfig | undefined;
  /**
   * The operator console under /console (MCP_CONSOLE_TOKENS, or a JWT role claim); absent, or
   * neither operators nor a JWT login: those paths are 404.
   */
  console?:
    | {
        operators: readonly ConsoleOperator[];
        jwtLogin?: ConsoleJwtLogin | undefined;
        loginLimits?: LoginLimits;
        livePollMs?: number;
      }
    | undefined;
}

/** What every MCP handler reaches through its context (mcp/context.ts), built once per app. */
function createMcpServices(
  options: GatewayAppOptions,
  metrics: GatewayMetrics,
  shutdownSignal: AbortSignal,
): McpServices {
  const { config } = options;
  const listenLimits = config.listenLimits ?? DEFAULT_LISTEN_LIMITS;
  return {
    taskService: options.taskService,
    catalogue: options.catalogue,
    requestState: createRequestStateCodec({
      secret: config.requestStateSecret,
      ttlMs: config.requestStateTtlMs,
    }),
    changes: options.changes,
    metrics,
    serverInfo: options.serverInfo ?? SERVER_INFO,
    pollLimits: config.pollRateLimit ? createPollLimits() : undefined,
    admission: options.admission ?? ADMIT_EVERYONE,
    shutdownSignal,
    tracing: config.tracing?.enabled === true,
    listen: {
      limits: listenLimits,
      slots: createStreamSlots(listenLimits),
      statements: createListenStatements(
        options.taskService,
        createLoadQueue(listenLimits.loadConcurrency),
      ),
    },
    settings: {
      taskTtlMs: config.taskTtlMs,
      taskPollIntervalMs: config.taskPollIntervalMs,
      sseKeepAliveMs: config.sseKeepAliveMs,
      listTtlMs: options.listTtlMs ?? 300_000,
    },
  };
}

/** RFC 9728 Protected Resource Metadata at each of its well-known paths. */
function addResourceMetadata(app: Hono<GatewayVariables>, metadata: ResourceMetadataConfig): void {
  const document = protectedResourceMetadata(metadata);
  for (const path of resourceMetadataPaths(metadata.resource)) {
    app.get(path, (c) => {
      // Public by nature; browser-based MCP clients read it from another origin.
      c.header('Access-Control-Allow-Origin', '*');
      c.header('Cache-Control', 'public, max-age=300');
      return c.json(document);
    });
  }
}

/** The operator console under /console, with its live event tail (closed on drain). */
function addConsole(
  app: Hono<GatewayVariables>,
  options: GatewayAppOptions,
  settings: NonNullable<GatewayAppOptions['console']>,
  shutdownSignal: AbortSignal,
): void {
  const { config, logger } = options;
  const tail = createEventTail({
    console: options.taskService.console,
    intervalMs: settings.livePollMs ?? 500,
    logger,
  });
  shutdownSignal.addEventListener('abort', () => tail.close(), { once: true });
  const workerLiveness = options.workerLiveness;
  app.route(
    '/console',
    createConsoleRoutes({
      console: options.taskService.console,
      sessions: createSessionKeeper(settings.operators, settings.jwtLogin),
      jwtLogin: settings.jwtLogin,
      ...(settings.loginLimits === undefined ? {} : { loginLimits: settings.loginLimits }),
      tail,
      logger,
      keepAliveMs: config.sseKeepAliveMs,
      taskTtlMs: config.taskTtlMs,
      shutdownSignal,
      ...(workerLiveness === undefined ? {} : { workers: () => workerLiveness.check() }),
    }),
  );
}

/**
 * The gateway's HTTP app (Hono): /healthz, /readyz, the resource metadata, /console, /metrics
 * and POST /mcp, with the request id, access log and JSON-RPC error reply around them. No
 * connections of its own: `createGateway` (gateway.ts) builds those and serves this app.
 */
export function createGatewayApp(options: GatewayAppOptions): Hono<GatewayVariables> {
  const { config, logger } = options;
  const metrics = options.metrics ?? createMetrics();
  const shutdownSignal = options.shutdownSignal ?? new AbortController().signal;
  // Every open listen stream waits on this one signal; hundreds of them are normal, not a leak.
  setMaxListeners(0, shutdownSignal);
  const services = createMcpServices(options, metrics, shutdownSignal);

  const app = new Hono<GatewayVariables>();
  app.use('*', requestContext(logger));
  addHealthRoutes(app, {
    databaseChecks: options.taskService.databaseChecks,
    queue: options.queue,
    authReady: options.auth.ready?.bind(options.auth),
    workerLiveness: options.workerLiveness,
    shutdownSignal,
    notReadySignal: options.notReadySignal,
  });
  if (options.resourceMetadata !== undefined) addResourceMetadata(app, options.resourceMetadata);
  const consoleSettings = options.console;
  if (
    consoleSettings !== undefined &&
    (consoleSettings.operators.length > 0 || consoleSettings.jwtLogin !== undefined)
  )
    addConsole(app, options, consoleSettings, shutdownSignal);

  app.get('/metrics', async (c) => {
    c.header('Content-Type', metrics.registry.contentType);
    return c.body(await metrics.registry.metrics());
  });

  app.post('/mcp', mcpAccessLog(metrics, logger));
  app.post('/mcp', (c) =>
    handleMcpPost(c, {
      auth: options.auth,
      services,
      maxBodyBytes: config.maxBodyBytes,
      requestTimeoutMs: config.requestTimeoutMs,
      allowedOrigins: config.allowedOrigins,
    }),
  );
  // R22: there is no GET stream and no session to DELETE.
  app.all('/mcp', () => {
    throw new HttpProtocolError(405, {
      code: ErrorCode.InvalidRequest,
      message: 'Method Not Allowed: use POST /mcp',
      headers: {
        Allow: 'POST',
      },
    });
  });

  app.notFound((c) => c.json({ error: 'not found' }, 404));
  app.onError(errorReply(logger));
  return app;
}
