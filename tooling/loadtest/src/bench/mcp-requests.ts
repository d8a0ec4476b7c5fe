/** The wire messages the bench sends: built by the client package, so they are a client's. */
import { buildRequest, DEFAULT_CAPABILITIES } from '@mcp-tasks/client';
import { PROTOCOL_VERSION } from '@mcp-tasks/protocol';
import { type Dispatcher, getGlobalDispatcher } from 'undici';

const FRAMING = {
  protocolVersion: PROTOCOL_VERSION,
  clientCapabilities: DEFAULT_CAPABILITIES,
  clientInfo: { name: 'mcp-tasks-bench', version: '1.0.0' },
};

export const BENCH_TOKEN = 'tok_bench_0000000000000000';
export const BENCH_TOKENS = `${BENCH_TOKEN}:bench:bench`;

/** A tool that runs as a task, takes no input and completes in one step (with a tool error). */
export const NO_INPUT_TOOL = 'failing_job';

export interface HttpRequestSpec {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** One JSON-RPC request as the client package builds it (headers, `_meta`), ready to replay. */
export function mcpRequest(
  method: string,
  params: Record<string, unknown>,
  id = 1,
  token = BENCH_TOKEN,
): HttpRequestSpec {
  const built = buildRequest(method, params, { id, framing: FRAMING, token });
  return { path: '/mcp', headers: built.headers, body: JSON.stringify(built.body) };
}

export const createTaskRequest = () =>
  mcpRequest('tools/call', { name: NO_INPUT_TOOL, arguments: {} });
export const getTaskRequest = (taskId: string) => mcpRequest('tasks/get', { taskId });

/**
 * Sends one request through an undici dispatcher (a keep-alive Pool per gateway in the end-to-end
 * run); returns the JSON-RPC result or throws with the error. `fetch` cost the sender about a
 * millisecond of CPU per request on the cores the measured processes share.
 */
export async function sendMcp(
  baseUrl: string,
  spec: HttpRequestSpec,
  dispatcher: Dispatcher = getGlobalDispatcher(),
): Promise<Record<string, unknown>> {
  const response = await dispatcher.request({
    origin: baseUrl,
    path: spec.path,
    method: 'POST',
    headers: spec.headers,
    body: spec.body,
  });
  const text = await response.body.text();
  const body = JSON.parse(text) as { result?: Record<string, unknown>; error?: unknown };
  if (body.result === undefined) throw new Error(`HTTP ${response.statusCode}: ${text}`);
  return body.result;
}
