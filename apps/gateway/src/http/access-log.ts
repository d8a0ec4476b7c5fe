import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { methodLabel } from '../mcp/methods.js';
import type { GatewayMetrics } from '../metrics.js';
import type { GatewayVariables } from './gateway-variables.js';
import { lazyChildLogger } from './lazy-child-logger.js';
import { requestIdFrom } from './request-id.js';

/** Every request: its id (a safe X-Request-Id from a proxy, else new), its logger, the header. */
export function requestContext(logger: Logger): MiddlewareHandler<GatewayVariables> {
  return async (c, next) => {
    const requestId = requestIdFrom(c.req.header('x-request-id') ?? null);
    c.set('requestId', requestId);
    c.set('log', lazyChildLogger(logger, { requestId }));
    // Set before the handler, the header rides along when c.json builds the reply; set on a
    // finished reply, Hono copies the whole Response. Replies a handler built itself (202, SSE)
    // never saw the prepared header and get it here.
    c.header('X-Request-Id', requestId);
    await next();
    if (!c.res.headers.has('X-Request-Id')) c.header('X-Request-Id', requestId);
  };
}

/** POST /mcp: the request metrics and one access line per request (for listen: when it opened). */
export function mcpAccessLog(
  metrics: GatewayMetrics,
  logger: Logger,
): MiddlewareHandler<GatewayVariables> {
  return async (c, next) => {
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
  };
}
