import {
  ErrorCode,
  TASK_METHODS,
  assertRoutingHeaders,
  MAX_PARAMS_DEPTH,
  ProtocolError,
  declaresTasksExtension,
  findTooDeep,
  findUnstorableText,
  invalidParamsError,
  jsonRpcResult,
  parseJsonRpcMessage,
  assertTasksExtension,
  tooDeepParamsError,
  parseRequestMeta,
  type RequestId,
  type RequestMeta,
} from '@mcp-tasks/protocol';
import type { Context } from 'hono';
import type { Level, Logger } from 'pino';
import type { LazyLogger } from '../http/lazy-child-logger.js';
import type { Authenticator, Identity } from '../auth/index.js';
import { HttpProtocolError } from '../errors.js';
import { assertAcceptsJsonOrSse, assertJsonContentType } from '../http/content-negotiation.js';
import { assertOriginAllowed } from '../http/origin.js';
import { parseJsonBody, readBodyWithLimit } from '../http/read-body.js';
import type { GatewayVariables } from '../http/gateway-variables.js';
import type { McpServices, RequestContext } from './context.js';
import { handlerFor } from './methods.js';
import { createRequestDeadline, type RequestDeadline } from './request-deadline.js';
import { traceRequest } from './request-span.js';

export interface EndpointOptions {
  auth: Authenticator;
  services: McpServices;
  maxBodyBytes: number;
  requestTimeoutMs: number;
  allowedOrigins: readonly string[] | '*' | undefined;
}

/**
 * Long-lived by design: a listen stream stays open until its tasks finish or the replica shuts
 * down, so the request timeout does not apply (its initial loads are one query per task id).
 */
const UNTIMED_METHODS: ReadonlySet<string> = new Set(['subscriptions/listen']);

/** `\uD800`–`\uDFFF` in JSON text: a surrogate, paired or not (findUnstorableText tells which). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** The request's id, when the body is an object with a valid one: error replies carry it. */
function detectableId(body: unknown): RequestId | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const id = (body as { id?: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined;
}

/**
 * Refuses a message nested past MAX_PARAMS_DEPTH before anything walks it: every later check and
 * handler may recurse over params (the envelope's own members are one level above them).
 */
function assertNestingWithinBound(body: unknown): void {
  const path = findTooDeep(body, MAX_PARAMS_DEPTH + 1);
  if (path === undefined) return;
  if (path[0] === 'params' && !Array.isArray(body)) throw tooDeepParamsError(path.slice(1));
  throw new ProtocolError(
    ErrorCode.InvalidRequest,
    `Invalid Request: the message nests deeper than ${MAX_PARAMS_DEPTH + 1} levels of arrays and objects`,
  );
}

/**
 * One validated request. The logger and the signal are getters: made only for a handler that
 * uses them (a poll uses neither), each once. They live on the class, not on an object literal,
 * so a request allocates no accessor closures.
 */
class McpRequestContext implements RequestContext {
  #log: Logger | undefined;

  constructor(
    readonly id: RequestId,
    readonly method: string,
    readonly params: Record<string, unknown>,
    readonly meta: RequestMeta,
    readonly tasksDeclared: boolean,
    readonly identity: Identity,
    private readonly requestLog: LazyLogger,
    private readonly deadline: RequestDeadline,
  ) {}

  get log(): Logger {
    return (this.#log ??= this.requestLog().child({
      method: this.method,
      tenant: this.identity.tenant,
      principal: this.identity.principal,
    }));
  }

  logs(level: Level): boolean {
    return this.requestLog.isLevelEnabled(level);
  }

  get signal(): AbortSignal {
    return this.deadline.signal;
  }

  disarmDeadline(): void {
    this.deadline.disarm();
  }

  checkDeadline(): void {
    this.deadline.check();
  }
}

/**
 * POST /mcp. The checks run in a fixed order, each answering exactly one way:
 * origin (403) → media types (415/406) → credentials (401, before the body is read so an
 * anonymous caller cannot make us buffer it) → body size (413) → JSON (-32700) → nesting depth
 * (-32602 in params, -32600 elsewhere: MAX_PARAMS_DEPTH, before anything walks the value) →
 * envelope (-32600) → notification (202) → method (-32601/404) → routing headers (-32020, R23,
 * before _meta so a header/body version clash wins over an unsupported version) → _meta
 * (-32602/-32022, R2–R3) → task capability (-32021, R4, before any task lookup) → no U+0000 or
 * lone surrogate anywhere in params (-32602) → the method's handler.
 * Every failure is thrown; app.onError is the one place that turns it into a reply.
 */
export async function handleMcpPost(
  c: Context<GatewayVariables>,
  options: EndpointOptions,
): Promise<Response> {
  const { services } = options;
  if (services.shutdownSignal.aborted) {
    throw new HttpProtocolError(503, {
      code: ErrorCode.InternalError,
      message: 'Server is shutting down; retry',
      headers: {
        Connection: 'close',
        'Retry-After': '1',
      },
    });
  }
  const request = c.req.raw;
  assertOriginAllowed(request.headers.get('origin'), options.allowedOrigins);
  assertJsonContentType(request.headers.get('content-type'));
  assertAcceptsJsonOrSse(request.headers.get('accept'));
  const identity = await options.auth.authenticate(request.headers.get('authorization'));

  const text = await readBodyWithLimit(request, options.maxBodyBytes);
  const body = parseJsonBody(text);
  const id = detectableId(body);
  if (id !== undefined) c.set('rpcId', id);
  assertNestingWithinBound(body);
  const message = parseJsonRpcMessage(body);
  c.set('rpcMethod', message.method);
  if (message.kind === 'request') c.set('rpcId', message.id);

  if (message.kind === 'notification') {
    assertRoutingHeaders(request.headers, message);
    // R1 and R18: accepted and never answered; notifications/cancelled does not cancel tasks.
    c.get('log')().debug({ method: message.method }, 'notification accepted');
    c.set('rpcCode', 'notification');
    return new Response(null, { status: 202 });
  }

  const handler = handlerFor(message.method);
  assertRoutingHeaders(request.headers, message);
  const meta = parseRequestMeta(message.params);
  if (TASK_METHODS.includes(message.method)) assertTasksExtension(meta, message.method);
  // JSON text can carry U+0000 and lone surrogates only as escapes (a raw NUL is a parse error,
  // a surrogate's UTF-8 bytes invalid UTF-8), so the walk over params runs only for the rare body
  // that has one, not on every poll.
  if (text.includes('\\u0000') || SURROGATE_ESCAPE.test(text)) {
    const unstorable = findUnstorableText(message.params ?? {});
    if (unstorable !== undefined) throw invalidParamsError([unstorable]);
  }

  const deadline = createRequestDeadline(
    () => request.signal,
    UNTIMED_METHODS.has(message.method) ? undefined : options.requestTimeoutMs,
  );
  const ctx = new McpRequestContext(
    message.id,
    message.method,
    message.params ?? {},
    meta,
    declaresTasksExtension(meta),
    identity,
    c.get('log'),
    deadline,
  );
  const outcome = await (services.tracing
    ? traceRequest(ctx, request.headers, () => deadline.run(handler(ctx, services)))
    : deadline.run(handler(ctx, services)));
  c.set('rpcCode', 'ok');
  if (outcome.kind === 'stream') return outcome.response;
  return c.json(jsonRpcResult(message.id, outcome.result), 200);
}
