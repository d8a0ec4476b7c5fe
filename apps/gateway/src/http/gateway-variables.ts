import type { RequestId } from '@mcp-tasks/protocol';
import type { LazyLogger } from './lazy-child-logger.js';

/** What the HTTP layer sets on each request's context for the handlers and the access log. */
export interface GatewayVariables {
  Variables: {
    requestId: string;
    /** The request's logger (bound to its request id), made on first use. */
    log: LazyLogger;
    rpcId: RequestId;
    rpcMethod: string;
    rpcCode: string;
  };
}
