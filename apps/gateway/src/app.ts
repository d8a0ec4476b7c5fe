import { jsonRpcError, ErrorCode, type Implementation } from '@mcp-tasks/protocol';
import type { TaskService } from '@mcp-tasks/store';
import type { ToolCatalogue } from '@mcp-tasks/tools';
import { Hono } from 'hono';
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { Authenticator } from './auth/index.js';
import { protectedResourceMetadata, resourceMetadataPaths } from './auth/resource-metadata.js';
import type { GatewayConfig, ResourceMetadataConfig } from './env.js';
import { HttpProtocolError, mapError } from './errors.js';
import type { GatewayVariables } from './http/gateway-variables.js';
import { lazyChildLogger } from './http/lazy-child-logger.js';
import { requestIdFrom } from './http/request-id.js';
import type { McpServices } from './mcp/context.js';
import { methodLabel } from './mcp/methods.js';
import { handleMcpPost } from './mcp/endpoint.js';
import {
  DEFAULT_LISTEN_LIMITS,
  createLoadQueue,
  createStreamSlots,
  type ListenLimits,
} from './mcp/listen-limits.js';
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

export interface GatewayOptions {
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

/**
 * One readiness check, bounded. The answer is only `ok` or `fail`: /readyz is unauthenticated,
 * and driver errors name internal hosts and ports, so the detail goes to the log instead.
 */
async function probe(
  name: string,
  check: () => Promise<unknown>,
  timeoutMs: number,
  log: Logger,
): Promise<[string, string]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise(
        (_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), timeoutMs)),
      ),
    ]);
    return [name, 'ok'];
  } catch (error) {
    log.warn({ err: error, check: name }, 'readiness check failed');
    return [name, 'fail'];
  } finally {
    clearTimeout(timer);
  }
}

export function createGateway(options: GatewayOptions): Hono<GatewayVariables> {
  const { config, logger } = options;
  const metrics = options.metrics ?? createMetrics();
  const shutdownSignal = options.shutdownSignal ?? new AbortController().signal;
  // Every open listen stream waits on this one signal; hundreds of them are normal, not a leak.
  setMaxListeners(0, shutdownSignal);
  const listenLimits = config.listenLimits ?? DEFAULT_LISTEN_LIMITS;
  const services: McpServices = {
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
      loadQueue: createLoadQueue(listenLimits.loadConcurrency),
    },
    settings: {
      taskTtlMs: config.taskTtlMs,
      taskPollIntervalMs: config.taskPollIntervalMs,
      sseKeepAliveMs: config.sseKeepAliveMs,
      listTtlMs: options.listTtlMs ?? 300_000,
    },
  };

  const app = new Hono<GatewayVariables>();

  app.use('*', async (c, next) => {
    const requestId = requestIdFrom(c.req.header('x-request-id') ?? null);
    c.set('requestId', requestId);
    c.set('log', lazyChildLogger(logger, { requestId }));
    // Set before the handler, the header rides along when c.json builds the reply; set on a
    // finished reply, Hono copies the whole Response. Replies a handler built itself (202, SSE)
    // never saw the prepared header and get it here.
    c.header('X-Request-Id', requestId);
    await next();
    if (!c.res.headers.has('X-Request-Id')) c.header('X-Request-Id', requestId);
  });

  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  app.get('/readyz', async (c) => {
    if (shutdownSignal.aborted || options.notReadySignal?.aborted === true)
      return c.json({ status: 'draining' }, 503);
    const log = c.get('log')();
    const workersCheck = options.workerLiveness?.check();
    const authReady = options.auth.ready?.bind(options.auth);
    const checks = await Promise.all([
      ...options.taskService.databaseChecks.map(({ name, check }) => probe(name, check, 2000, log)),
      probe('redis', () => options.queue.ping(), 2000, log),
      // Without the provider's keys no token can be verified: this replica serves nobody.
      ...(authReady === undefined ? [] : [probe('identity_provider', authReady, 2000, log)]),
    ]);
    // Workers are reported, not checked: a fresh cluster whose workers are still starting must
    // not take every gateway out of the load balancer (tasks are durable and wait).
    const ready = checks.every(([, outcome]) => outcome === 'ok');
    const workers = await workersCheck;
    return c.json(
      {
        status: ready ? 'ready' : 'not_ready',
        checks: Object.fromEntries(checks),
        ...(workers === undefined ? {} : { workers }),
      },
      ready ? 200 : 503,
    );
  });

  if (options.resourceMetadata !== undefined) {
    const document = protectedResourceMetadata(options.resourceMetadata);
    for (const path of resourceMetadataPaths(options.resourceMetadata.resource)) {
      app.get(path, (c) => {
        // Public by nature; browser-based MCP clients read it from another origin.
        c.header('Access-Control-Allow-Origin', '*');
        c.header('Cache-Control', 'public, max-age=300');
        return c.json(document);
      });
    }
  }

  if (
    options.console !== undefined &&
    (options.console.operators.length > 0 || options.console.jwtLogin !== undefined)
  ) {
    const tail = createEventTail({
      console: options.taskService.console,
      intervalMs: options.console.livePollMs ?? 500,
      logger,
    });
    shutdownSignal.addEventListener('abort', () => tail.close(), { once: true });
    const workerLiveness = options.workerLiveness;
    app.route(
      '/console',
      createConsoleRoutes({
        console: options.taskService.console,
        sessions: createSessionKeeper(options.console.operators, options.console.jwtLogin),
        jwtLogin: options.console.jwtLogin,
        ...(options.console.loginLimits === undefined
          ? {}
          : { loginLimits: options.console.loginLimits }),
        tail,
        logger,
        keepAliveMs: config.sseKeepAliveMs,
        taskTtlMs: config.taskTtlMs,
        shutdownSignal,
        ...(workerLiveness === undefined ? {} : { workers: () => workerLiveness.check() }),
      }),
    );
  }

  app.get('/metrics', async (c) => {
    c.header('Content-Type', metrics.registry.contentType);
    return c.body(await metrics.registry.metrics());
  });

  app.post('/mcp', async (c, next) => {
    const stopTimer = metrics.duration.startTimer();
    await next();
    const method = methodLabel(c.get('rpcMethod'));
    const seconds = stopTimer({ method });
    const code = c.get('rpcCode') ?? 'none';
    metrics.requests.inc({ method, code, status: String(c.res.status) });
    // One access line per request (for listen: when the stream opened); the request id is bound.
    if (logger.isLevelEnabled('info'))
      c.get('log')().info(
        {
          method: c.get('rpcMethod'),
          code,
          status: c.res.status,
          durationMs: Math.round(seconds * 1000),
        },
        'mcp request',
      );
  });
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
    throw new HttpProtocolError(
      405,
      ErrorCode.InvalidRequest,
      'Method Not Allowed: use POST /mcp',
      undefined,
      {
        Allow: 'POST',
      },
    );
  });

  app.notFound((c) => c.json({ error: 'not found' }, 404));

  app.onError((error, c) => {
    const mapped = mapError(error);
    const log = c.get('log')?.() ?? logger;
    const code = mapped.error.code;
    c.set('rpcCode', String(code));
    if (mapped.unexpected)
      log.error({ err: error, method: c.get('rpcMethod') }, 'unexpected error');
    else if (mapped.outage)
      log.warn(
        { err: error, status: mapped.status, method: c.get('rpcMethod') },
        mapped.error.message,
      );
    else
      log.info({ code, status: mapped.status, method: c.get('rpcMethod') }, mapped.error.message);
    const id = c.get('rpcId') ?? null;
    const response = c.json(jsonRpcError(id, mapped.error), mapped.status as 400);
    for (const [name, value] of Object.entries(mapped.headers)) response.headers.set(name, value);
    response.headers.set('X-Request-Id', c.get('requestId') ?? '');
    return response;
  });

  return app;
}
