import {
  buildRequestMeta,
  buildRoutingHeaders,
  PROTOCOL_VERSION,
  TASKS_EXTENSION_ID,
  type Implementation,
  type RequestId,
} from '@mcp-tasks/protocol';
import { context, propagation } from '@opentelemetry/api';

/** What every request of one client carries in `_meta` (R2, R4). */
export interface Framing {
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo?: Implementation;
}

/** Form elicitation and the Tasks extension: what this client can handle. */
export const DEFAULT_CAPABILITIES: Record<string, unknown> = {
  elicitation: { form: {} },
  extensions: { [TASKS_EXTENSION_ID]: {} },
};

export const DEFAULT_FRAMING: Framing = {
  protocolVersion: PROTOCOL_VERSION,
  clientCapabilities: DEFAULT_CAPABILITIES,
};

/** Requests that may use the Tasks extension: a call may become a task; the rest act on one. */
const TASK_SCOPED_METHODS = new Set([
  'tools/call',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
  'subscriptions/listen',
]);

/**
 * Capabilities are per request (R4): the Tasks extension is declared on the requests that can
 * use it and left off the others, as the official ext-tasks client frames them.
 */
export function framingFor(method: string, framing: Framing): Framing {
  if (TASK_SCOPED_METHODS.has(method)) return framing;
  const extensions = framing.clientCapabilities.extensions;
  if (
    typeof extensions !== 'object' ||
    extensions === null ||
    !(TASKS_EXTENSION_ID in extensions)
  ) {
    return framing;
  }
  const { [TASKS_EXTENSION_ID]: _tasks, ...others } = extensions as Record<string, unknown>;
  const { extensions: _all, ...capabilities } = framing.clientCapabilities;
  return {
    ...framing,
    clientCapabilities:
      Object.keys(others).length > 0 ? { ...capabilities, extensions: others } : capabilities,
  };
}

const TRACE_KEYS = ['traceparent', 'tracestate', 'baggage'] as const;

/**
 * The caller's active OpenTelemetry context as `_meta` keys (SEP-414: unprefixed `traceparent`,
 * `tracestate`, `baggage`), so the server's spans join the caller's trace. Only the API is used:
 * without an SDK (no propagator registered) or without an active span this adds nothing.
 */
export function activeTraceMeta(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const meta: Record<string, string> = {};
  for (const key of TRACE_KEYS) if (carrier[key] !== undefined) meta[key] = carrier[key];
  return meta;
}

export interface JsonRpcRequestBody {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params: Record<string, unknown>;
}

export interface BuiltRequest {
  headers: Record<string, string>;
  body: JsonRpcRequestBody;
}

/**
 * One POST /mcp: the body with its `_meta`, and the headers that mirror it (R23), both from the
 * protocol package so they cannot drift from what the gateway checks.
 */
export function buildRequest(
  method: string,
  params: Record<string, unknown>,
  options: { id: RequestId; framing: Framing; token?: string },
): BuiltRequest {
  const { framing } = options;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    ...buildRoutingHeaders(method, params, framing.protocolVersion),
  };
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  const callerMeta = params._meta;
  const meta = {
    ...activeTraceMeta(),
    ...(typeof callerMeta === 'object' && callerMeta !== null ? callerMeta : {}),
    ...buildRequestMeta(framing),
  };
  return {
    headers,
    body: { jsonrpc: '2.0', id: options.id, method, params: { ...params, _meta: meta } },
  };
}

export interface JsonRpcReplyBody {
  jsonrpc?: string;
  id?: RequestId;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** A server-to-client message on an SSE stream: a notification, or the request's own reply. */
export interface StreamMessage extends JsonRpcReplyBody {
  method?: string;
  params?: Record<string, unknown>;
}
