// A minimal MCP 2026-07-28 client for the stack's tests: one POST per message, SSE read as it comes.
const PROTOCOL = '2026-07-28';

export interface SseMessage {
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
}

export function mcpRequest(
  url: string,
  token: string,
  method: string,
  params: Record<string, unknown>,
  id: string | number = 1,
): Promise<Response> {
  const name = method === 'tools/call' ? params.name : params.taskId;
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': PROTOCOL,
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': PROTOCOL,
          'io.modelcontextprotocol/clientCapabilities': {
            extensions: { 'io.modelcontextprotocol/tasks': {} },
          },
          'io.modelcontextprotocol/clientInfo': { name: 'stack-tests', version: '1.0.0' },
        },
      },
    }),
  });
}

export async function mcp(
  url: string,
  token: string,
  method: string,
  params: Record<string, unknown>,
): Promise<{ status: number; body: { result?: Record<string, unknown>; error?: unknown } }> {
  const response = await mcpRequest(url, token, method, params);
  return { status: response.status, body: (await response.json()) as never };
}

/** Reads SSE messages one at a time, as the bytes arrive. */
export function sseMessages(response: Response): {
  next(timeoutMs: number): Promise<SseMessage | 'timeout' | 'end'>;
  cancel(): Promise<void>;
} {
  if (response.body === null) throw new Error('no body');
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let reading: Promise<{ done: boolean; value?: Uint8Array }> | undefined;
  return {
    async next(timeoutMs) {
      for (;;) {
        const boundary = buffer.indexOf('\n\n');
        if (boundary >= 0) {
          const block = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          const data = block
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart());
          if (data.length > 0) return JSON.parse(data.join('\n')) as SseMessage;
          continue;
        }
        reading ??= reader.read();
        const timer = new Promise<'timeout'>((resolve) =>
          setTimeout(() => resolve('timeout'), timeoutMs),
        );
        const outcome = await Promise.race([reading, timer]);
        if (outcome === 'timeout') return 'timeout';
        reading = undefined;
        if (outcome.done) return 'end';
        buffer += decoder.decode(outcome.value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  };
}

/** `mcp_requests_total` for one method, summed over codes, from a gateway's own /metrics. */
export async function requestCount(gatewayUrl: string, method: string): Promise<number> {
  const text = await (await fetch(`${gatewayUrl}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('mcp_requests_total{') && line.includes(`method="${method}"`)) {
      total += Number(line.split(' ').pop());
    }
  }
  return total;
}
