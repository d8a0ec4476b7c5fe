/** The wire messages the bench sends: the same shapes a client of the tasks extension sends. */
export const PROTOCOL_VERSION = '2026-07-28';
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export const BENCH_TOKEN = 'tok_bench_0000000000000000';
export const BENCH_TOKENS = `${BENCH_TOKEN}:bench:bench`;

/** A tool that runs as a task, takes no input and completes in one step (with a tool error). */
export const NO_INPUT_TOOL = 'failing_job';

export interface HttpRequestSpec {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export function mcpRequest(
  method: string,
  params: Record<string, unknown>,
  id = 1,
): HttpRequestSpec {
  const name = method === 'tools/call' ? params.name : params.taskId;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL_VERSION,
    'mcp-method': method,
    authorization: `Bearer ${BENCH_TOKEN}`,
  };
  if (typeof name === 'string') headers['mcp-name'] = name;
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
        'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
        'io.modelcontextprotocol/clientInfo': { name: 'mcp-tasks-bench', version: '1.0.0' },
      },
    },
  });
  return { path: '/mcp', headers, body };
}

export const createTaskRequest = () =>
  mcpRequest('tools/call', { name: NO_INPUT_TOOL, arguments: {} });
export const getTaskRequest = (taskId: string) => mcpRequest('tasks/get', { taskId });

/** Sends one request with fetch; returns the JSON-RPC result or throws with the error. */
export async function sendMcp(
  baseUrl: string,
  spec: HttpRequestSpec,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${baseUrl}${spec.path}`, {
    method: 'POST',
    headers: spec.headers,
    body: spec.body,
  });
  const text = await response.text();
  const body = JSON.parse(text) as { result?: Record<string, unknown>; error?: unknown };
  if (body.result === undefined) throw new Error(`HTTP ${response.status}: ${text}`);
  return body.result;
}
