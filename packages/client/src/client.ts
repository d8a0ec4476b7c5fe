import type { Implementation, RequestId } from '@mcp-tasks/protocol';
import { createParser } from 'eventsource-parser';
import { DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';
import {
  ConnectionError,
  HttpError,
  InputRequiredError,
  McpError,
  parseRetryAfter,
} from './errors.js';
import { MemoryHandleStore, type HandleStore } from './handle-store.js';
import { readSseMessages } from './sse.js';
import { TaskHandle, type HandleConnection } from './task-handle.js';
import type {
  CallToolResult,
  InputHandler,
  InputRequest,
  TaskSnapshot,
  ToolInfo,
} from './types.js';
import {
  buildRequest,
  DEFAULT_FRAMING,
  framingFor,
  type BuiltRequest,
  type Framing,
  type JsonRpcReplyBody,
  type StreamMessage,
} from './wire.js';

/** Where the client gets its bearer token: an async function, so tokens can be refreshed. */
export type TokenSource = (context: {
  /** The token the server just refused (401), if that is why it is asked. */
  rejected?: string;
}) => string | undefined | Promise<string | undefined>;

export interface ClientOptions {
  /** The MCP endpoint, e.g. `https://tasks.example.com/mcp`. One URL: replicas sit behind it. */
  url: string;
  token?: string;
  /**
   * Called before every request (a refreshed OAuth token, say); wins over `token`. After a 401
   * it is called once more with the token that was refused (`rejected`), and the request is
   * sent again if it returns another one: a token revoked or rotated early costs one round trip,
   * and a task handle outlives any one token. `clientCredentials()` is one such source.
   */
  getToken?: TokenSource;
  fetch?: typeof fetch;
  clientInfo?: Implementation;
  /** Defaults to form elicitation plus the Tasks extension. */
  capabilities?: Record<string, unknown>;
  protocolVersion?: string;
  store?: HandleStore;
  backoff?: Partial<BackoffPolicy>;
  /**
   * A `subscriptions/listen` stream silent this long (no event, no keep-alive comment) is taken
   * for dead and reopened; default 45 s, three of mcp-tasks' default keep-alives. Keep it above
   * the server's keep-alive interval (`MCP_SSE_KEEPALIVE_MS`); 0 waits forever.
   */
  streamIdleTimeoutMs?: number;
  /**
   * Trace context sent in every request's `_meta` (`traceparent`, `tracestate`), over the active
   * OpenTelemetry context's: a caller with no SDK that still belongs to a trace (the CLI's
   * `TRACEPARENT`). A request's own `_meta` keys win over these.
   */
  traceContext?: Record<string, string>;
}

/** One reply as it arrived, for callers that assert on status and headers (tests, debugging). */
export interface RawReply {
  request: BuiltRequest;
  status: number;
  headers: Headers;
  text: string;
  /** The decoded JSON-RPC reply, when the body was one (JSON, or the reply event of an SSE body). */
  message?: JsonRpcReplyBody;
}

export type CallOutcome =
  | { kind: 'complete'; result: CallToolResult }
  | { kind: 'task'; handle: TaskHandle; created: TaskSnapshot };

export interface CallOptions {
  /** Answers synchronous MRTR rounds (`input_required` before any task exists). */
  onInput?: InputHandler;
  signal?: AbortSignal;
}

export interface McpTasksClient extends HandleConnection {
  readonly url: string;
  readonly framing: Framing;
  readonly backoff: BackoffPolicy;
  readonly store: HandleStore;
  /** Builds the exact request `send` would send, without sending it. */
  buildRequest(method: string, params?: Record<string, unknown>): Promise<BuiltRequest>;
  /** Sends one request and returns the reply as it came (never throws for a JSON-RPC error). */
  send(method: string, params?: Record<string, unknown>, signal?: AbortSignal): Promise<RawReply>;
  discover(signal?: AbortSignal): Promise<Record<string, unknown>>;
  listTools(signal?: AbortSignal): Promise<ToolInfo[]>;
  callTool(
    name: string,
    args?: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<CallOutcome>;
  /** A handle for a task created elsewhere (another process, a previous run). */
  task(taskId: string): TaskHandle;
  /** Every unfinished task in the store, as handles ready to `wait()`. */
  unfinished(): Promise<TaskHandle[]>;
  /** Waits for every unfinished task in the store; settles each on its own. */
  resumeAll(
    options?: Parameters<TaskHandle['wait']>[0],
  ): Promise<PromiseSettledResult<TaskSnapshot>[]>;
}

function bearerOf(built: BuiltRequest): string | undefined {
  const header = built.headers.Authorization;
  return header?.startsWith('Bearer ') === true ? header.slice('Bearer '.length) : undefined;
}

export function createClient(options: ClientOptions): McpTasksClient {
  const framing: Framing = {
    protocolVersion: options.protocolVersion ?? DEFAULT_FRAMING.protocolVersion,
    clientCapabilities: options.capabilities ?? DEFAULT_FRAMING.clientCapabilities,
    ...(options.clientInfo === undefined ? {} : { clientInfo: options.clientInfo }),
  };
  const backoff: BackoffPolicy = { ...DEFAULT_BACKOFF, ...options.backoff };
  const store = options.store ?? new MemoryHandleStore();
  const endpoint = openEndpoint(options, framing);

  const send = (
    method: string,
    params: Record<string, unknown> = {},
    signal?: AbortSignal,
  ): Promise<RawReply> => sendRequest(endpoint, method, params, signal);

  const request = async (
    method: string,
    params: Record<string, unknown> = {},
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> => resultOf(await send(method, params, signal));

  const client: McpTasksClient = {
    url: options.url,
    framing,
    backoff,
    store,
    buildRequest: endpoint.build,
    send,
    request,
    listen: (taskIds, signal) =>
      openListenStream(endpoint, taskIds, signal, options.streamIdleTimeoutMs),
    discover: (signal) => request('server/discover', {}, signal),
    listTools: (signal) => listAllTools(request, signal),
    callTool: (name, args = {}, callOptions = {}) =>
      callToolRounds({ client, request, url: options.url }, name, args, callOptions),
    task: (taskId) => new TaskHandle(client, taskId),
    async unfinished() {
      const stored = await store.list();
      return stored
        .filter((t) => t.url === options.url)
        .map((t) => new TaskHandle(client, t.taskId, t));
    },
    async resumeAll(waitOptions) {
      const handles = await client.unfinished();
      return Promise.allSettled(handles.map((h) => h.wait(waitOptions)));
    },
  };
  return client;
}

/** One client's way to its endpoint: numbers, frames and authorizes requests, and posts them. */
interface Endpoint {
  readonly url: string;
  /** Whether a token the server refused can be asked for again (`getToken` is set). */
  readonly refreshes: boolean;
  readonly build: (
    method: string,
    params?: Record<string, unknown>,
    id?: RequestId,
    rejected?: string,
  ) => Promise<BuiltRequest>;
  readonly post: (built: BuiltRequest, signal?: AbortSignal) => Promise<Response>;
}

function openEndpoint(options: ClientOptions, framing: Framing): Endpoint {
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  let nextId = 1;

  const token = async (rejected?: string): Promise<string | undefined> =>
    options.getToken === undefined
      ? options.token
      : await options.getToken(rejected === undefined ? {} : { rejected });

  const build = async (
    method: string,
    params: Record<string, unknown> = {},
    id: RequestId = nextId++,
    rejected?: string,
  ): Promise<BuiltRequest> => {
    const bearer = await token(rejected);
    if (options.traceContext !== undefined) {
      const own = typeof params._meta === 'object' && params._meta !== null ? params._meta : {};
      params = { ...params, _meta: { ...options.traceContext, ...own } };
    }
    return buildRequest(method, params, {
      id,
      framing: framingFor(method, framing),
      ...(bearer === undefined ? {} : { token: bearer }),
    });
  };

  const post = async (built: BuiltRequest, signal?: AbortSignal): Promise<Response> => {
    try {
      return await fetchFn(options.url, {
        method: 'POST',
        headers: built.headers,
        body: JSON.stringify(built.body),
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ConnectionError(`cannot reach ${options.url}: ${describeCause(error)}`, {
        cause: error,
      });
    }
  };

  return { url: options.url, refreshes: options.getToken !== undefined, build, post };
}

/** Sends one request; after a 401 asks for another token once and, given one, sends again. */
async function sendRequest(
  endpoint: Endpoint,
  method: string,
  params: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<RawReply> {
  let built = await endpoint.build(method, params);
  let response = await endpoint.post(built, signal);
  const refused = bearerOf(built);
  if (response.status === 401 && endpoint.refreshes && refused !== undefined) {
    const again = await endpoint.build(method, params, built.body.id, refused);
    if (bearerOf(again) !== refused) {
      await response.body?.cancel();
      built = again;
      response = await endpoint.post(built, signal);
    }
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw new ConnectionError(`the reply from ${endpoint.url} was cut`, { cause: error });
  }
  return {
    request: built,
    status: response.status,
    headers: response.headers,
    text,
    ...decodeReply(response.headers.get('content-type'), text, built.body.id),
  };
}

async function openListenStream(
  endpoint: Endpoint,
  taskIds: string[],
  signal: AbortSignal | undefined,
  idleTimeoutMs: number | undefined,
): Promise<AsyncGenerator<StreamMessage>> {
  const built = await endpoint.build('subscriptions/listen', { notifications: { taskIds } });
  const response = await endpoint.post(built, signal);
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream') || response.body === null) {
    // An error (or a server that answers listen with plain JSON): surface it as such.
    const text = await response.text();
    const reply = decodeReply(type, text, built.body.id);
    resultOf({
      request: built,
      status: response.status,
      headers: response.headers,
      text,
      ...reply,
    });
    throw new HttpError(
      response.status,
      'subscriptions/listen did not answer with an event stream',
    );
  }
  // Unset, readSseMessages applies DEFAULT_STREAM_IDLE_TIMEOUT_MS.
  return readSseMessages(response.body, { idleTimeoutMs });
}

type RequestFn = McpTasksClient['request'];

async function listAllTools(request: RequestFn, signal?: AbortSignal): Promise<ToolInfo[]> {
  const tools: ToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await request('tools/list', cursor === undefined ? {} : { cursor }, signal);
    tools.push(...((page.tools as ToolInfo[] | undefined) ?? []));
    cursor = typeof page.nextCursor === 'string' ? page.nextCursor : undefined;
  } while (cursor !== undefined);
  return tools;
}

/** `tools/call`, answering synchronous MRTR rounds until a result or a task comes back. */
async function callToolRounds(
  on: { client: McpTasksClient; request: RequestFn; url: string },
  name: string,
  args: Record<string, unknown>,
  callOptions: CallOptions,
): Promise<CallOutcome> {
  let params: Record<string, unknown> = { name, arguments: args };
  const seen = new Set<string>();
  for (;;) {
    const result = await on.request('tools/call', params, callOptions.signal);
    if (result.resultType === 'task') {
      const created = result as unknown as TaskSnapshot;
      const handle = on.client.task(created.taskId);
      await on.client.store.save({
        taskId: created.taskId,
        url: on.url,
        toolName: name,
        createdAt: new Date().toISOString(),
        answeredKeys: [],
        lastStatus: created.status,
      });
      return { kind: 'task', handle, created };
    }
    if (result.resultType !== 'input_required') {
      return { kind: 'complete', result: result };
    }
    const requests = (result.inputRequests ?? {}) as Record<string, InputRequest>;
    const fresh = Object.fromEntries(Object.entries(requests).filter(([k]) => !seen.has(k)));
    if (callOptions.onInput === undefined || Object.keys(fresh).length === 0) {
      throw new InputRequiredError(requests);
    }
    for (const key of Object.keys(fresh)) seen.add(key);
    const answers = await callOptions.onInput(fresh, {
      ...(callOptions.signal === undefined ? {} : { signal: callOptions.signal }),
    });
    // MRTR: the retry carries the answers and the opaque state back, nothing else new (R13).
    params = { name, arguments: args, inputResponses: answers };
    if (typeof result.requestState === 'string') params.requestState = result.requestState;
  }
}

function decodeReply(
  contentType: string | null,
  text: string,
  id: RequestId,
): { message?: JsonRpcReplyBody } {
  try {
    if (contentType?.includes('text/event-stream')) {
      // The reply is the data event whose id is ours; notifications before it are not ours to keep.
      const data: string[] = [];
      const parser = createParser({ onEvent: (event) => data.push(event.data) });
      parser.feed(text);
      parser.reset({ consume: true });
      for (const item of data) {
        const message = JSON.parse(item) as JsonRpcReplyBody;
        if (message.id === id && ('result' in message || 'error' in message)) return { message };
      }
      return {};
    }
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? { message: parsed }
      : {};
  } catch {
    return {};
  }
}

function resultOf(reply: RawReply): Record<string, unknown> {
  const retryAfterMs =
    parseRetryAfter(reply.headers.get('retry-after')) ??
    retryAfterFromData(reply.message?.error?.data);
  const error = reply.message?.error;
  if (error !== undefined) {
    throw new McpError(error.code, error.message, error.data, reply.status, retryAfterMs);
  }
  const result = reply.message?.result;
  if (result === undefined || typeof result !== 'object' || result === null) {
    throw new HttpError(reply.status, reply.text, retryAfterMs);
  }
  return result;
}

function retryAfterFromData(data: unknown): number | undefined {
  const value = (data as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  return typeof value === 'number' ? value : undefined;
}

function describeCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
