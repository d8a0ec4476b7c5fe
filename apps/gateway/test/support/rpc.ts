import { buildRequest, readSseMessages, type BuiltRequest } from '@mcp-tasks/client';
import type { RequestId } from '@mcp-tasks/protocol';
import { expect } from 'vitest';
import { SERVER_INFO } from '../../src/app.js';

export const PROTOCOL = '2026-07-28';
export const TASKS_EXT = 'io.modelcontextprotocol/tasks';
export const CAPS_TASKS = { extensions: { [TASKS_EXT]: {} } };
export const CAPS_NONE = {};

/** Three callers: alice and bob share a tenant; eve is "alice" in another tenant. */
export const TOKENS = {
  alice: 'tok_alice_0000000000000000',
  bob: 'tok_bob_00000000000000000000',
  eve: 'tok_eve_00000000000000000000',
} as const;
export const MCP_TOKENS = `${TOKENS.alice}:acme:alice,${TOKENS.bob}:acme:bob,${TOKENS.eve}:globex:alice`;

export interface RpcOptions {
  id?: RequestId;
  /** Which caller; null sends no Authorization. */
  as?: keyof typeof TOKENS | null;
  caps?: Record<string, unknown>;
  version?: string;
  /** Replaces `_meta` entirely; null removes it. */
  meta?: Record<string, unknown> | null;
  /** Header overrides; null removes the header. */
  headers?: Record<string, string | null>;
  notification?: boolean;
}

/**
 * The request exactly as `@mcp-tasks/client` builds it (its `_meta` and routing headers), then
 * bent by the test's overrides: that is how these tests send deliberately broken requests
 * without writing the well-formed parts a second time.
 */
function buildTestRequest(
  method: string,
  params: Record<string, unknown>,
  options: RpcOptions,
): BuiltRequest {
  const as = options.as === undefined ? 'alice' : options.as;
  return buildRequest(method, params, {
    id: options.id === undefined ? 1 : options.id,
    framing: {
      protocolVersion: options.version ?? PROTOCOL,
      clientCapabilities: options.caps ?? CAPS_TASKS,
      clientInfo: { name: 'gateway-tests', version: '1.0.0' },
    },
    ...(as === null ? {} : { token: TOKENS[as] }),
  });
}

export function rpcBody(
  method: string,
  params: Record<string, unknown>,
  options: RpcOptions = {},
): Record<string, unknown> {
  const { body } = buildTestRequest(method, params, options);
  const fullParams: Record<string, unknown> = { ...body.params };
  if (options.meta === null) delete fullParams._meta;
  else if (options.meta !== undefined) fullParams._meta = options.meta;
  const message: Record<string, unknown> = { jsonrpc: '2.0', method, params: fullParams };
  if (!options.notification) message.id = body.id;
  return message;
}

export function rpcHeaders(
  method: string,
  params: Record<string, unknown>,
  options: RpcOptions = {},
): Headers {
  const headers = new Headers(buildTestRequest(method, params, options).headers);
  for (const [key, value] of Object.entries(options.headers ?? {})) {
    if (value === null) headers.delete(key);
    else headers.set(key, value);
  }
  return headers;
}

export interface WireError {
  code: number;
  message: string;
  data?: unknown;
}

export interface RpcReply {
  status: number;
  headers: Headers;
  text: string;
  /** The decoded body, or undefined when it was empty or not JSON. */
  body: unknown;
  /** `body.result`; throws (failing the test with the body) when the reply is not a result. */
  readonly result: Record<string, unknown>;
  /** `body.error`; throws when the reply is not an error. */
  readonly error: WireError;
}

export interface FetchLike {
  request(input: string, init: RequestInit): Response | Promise<Response>;
}

export async function readReply(response: Response): Promise<RpcReply> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  const field = (name: 'result' | 'error'): unknown => {
    const value = (body as Record<string, unknown> | undefined)?.[name];
    if (typeof value !== 'object' || value === null) {
      throw new Error(`expected a JSON-RPC ${name}, got HTTP ${response.status}: ${text}`);
    }
    return value;
  };
  return {
    status: response.status,
    headers: response.headers,
    text,
    body,
    get result() {
      return field('result') as Record<string, unknown>;
    },
    get error() {
      return field('error') as WireError;
    },
  };
}

/** One JSON-RPC call over in-process HTTP (`app.request`) or a real URL (`{ request: fetch-to-url }`). */
export async function rpc(
  target: FetchLike,
  method: string,
  params: Record<string, unknown> = {},
  options: RpcOptions = {},
): Promise<RpcReply> {
  const response = await target.request('/mcp', {
    method: 'POST',
    headers: rpcHeaders(method, params, options),
    body: JSON.stringify(rpcBody(method, params, options)),
  });
  return readReply(response);
}

/** Targets a running gateway at a base URL, with the same interface as app.request. */
export function remote(baseUrl: string): FetchLike {
  return { request: (path, init) => fetch(new URL(path, baseUrl), init) };
}

export interface SseEvent {
  data: unknown;
}

/** Reads the JSON-RPC messages of an SSE response one at a time, with the client's parser. */
export function sseReader(response: Response): {
  next(timeoutMs?: number): Promise<SseEvent | undefined>;
  cancel(): Promise<void>;
} {
  if (response.body === null) throw new Error('no body');
  const messages = readSseMessages(response.body as ReadableStream<Uint8Array>);
  return {
    async next(timeoutMs = 10_000) {
      let timer: NodeJS.Timeout | undefined;
      const next = await Promise.race([
        messages.next(),
        new Promise<never>(
          (_, reject) =>
            (timer = setTimeout(
              () => reject(new Error('no SSE event before the deadline')),
              timeoutMs,
            )),
        ),
      ]).finally(() => clearTimeout(timer));
      return next.done ? undefined : { data: next.value };
    },
    async cancel() {
      await messages.return(undefined);
    },
  };
}

/** The task call most tests need: a small report, which parks for approval once it runs. */
export const SMALL_REPORT = { name: 'generate_report', arguments: { size: 'small' } };

/** The `_meta` every result of this server carries. */
export const SERVER_INFO_META = { 'io.modelcontextprotocol/serverInfo': SERVER_INFO };

/** An accepting answer to an elicitation, as a client puts it in `inputResponses`. */
export const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });

/** A form elicitation asking one yes/no question (`ok`), as a worker puts it in `inputRequests`. */
export const elicitation = (message: string) => ({
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message,
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
  },
});

/** The whole reply to a request whose result is empty (tasks/update, tasks/cancel's ack), id 1. */
export const EMPTY_RESULT_REPLY = {
  jsonrpc: '2.0',
  id: 1,
  result: { resultType: 'complete', _meta: SERVER_INFO_META },
};

/** tasks/get of one task through `target`. */
export async function getTaskResult(
  target: FetchLike,
  taskId: string,
  options: RpcOptions = {},
): Promise<RpcReply> {
  return rpc(target, 'tasks/get', { taskId }, options);
}

/** Creates a small report task through `target` and returns its id. */
export async function createReportTask(
  target: FetchLike,
  options: RpcOptions = {},
): Promise<string> {
  const reply = await rpc(target, 'tools/call', SMALL_REPORT, options);
  expect(reply.status).toBe(200);
  expect(reply.result.resultType).toBe('task');
  return reply.result.taskId as string;
}
