import { jsonRpcError } from '@mcp-tasks/protocol';
import type { ErrorHandler } from 'hono';
import type { Logger } from 'pino';
import { mapError } from '../errors.js';
import type { GatewayVariables } from './gateway-variables.js';

/**
 * Every error a handler throws, as a JSON-RPC error reply (mapError picks status, code and
 * headers) and one log line: error for the unexpected, warn for an outage, info otherwise.
 */
export function errorReply(logger: Logger): ErrorHandler<GatewayVariables> {
  return (error, c) => {
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
  };
}
