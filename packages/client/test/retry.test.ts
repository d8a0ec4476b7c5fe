import { createServer, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, McpError } from '../src/index.js';

/** A real server whose tasks/get answers are scripted one by one. */
async function serve(replies: ((res: ServerResponse) => void)[]) {
  let served = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const next = replies[Math.min(served++, replies.length - 1)]!;
      next(res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}/mcp`, served: () => served };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const done = json(200, {
  jsonrpc: '2.0',
  id: 1,
  result: { resultType: 'complete', taskId: 'tsk_1', status: 'completed', result: { content: [] } },
});

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
});

describe('waiting through rate limits, overload and network errors', () => {
  it('honours Retry-After on 429, backs off on 503 and a cut connection, then finishes', async () => {
    const s = await serve([
      json(
        429,
        { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'slow down' } },
        { 'retry-after': '1' },
      ),
      json(503, { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'draining' } }),
      (res) => res.socket?.destroy(),
      done,
    ]);
    server = s.server;
    const client = createClient({ url: s.url, backoff: { initialMs: 10, maxMs: 5000 } });
    const retries: { error: string; delayMs: number }[] = [];
    const final = await client.task('tsk_1').wait({
      onRetry: (error, delayMs) => retries.push({ error: (error as Error).name, delayMs }),
    });
    expect(final.status).toBe('completed');
    expect(retries.map((r) => r.error)).toEqual(['McpError', 'McpError', 'ConnectionError']);
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(1000);
    expect(retries[1]!.delayMs).toBeLessThan(1000);
    expect(s.served()).toBe(4);
  });

  it('caps a long Retry-After at the policy maximum', async () => {
    const s = await serve([
      json(
        429,
        { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'slow down' } },
        { 'retry-after': '3600' },
      ),
      done,
    ]);
    server = s.server;
    const client = createClient({ url: s.url, backoff: { initialMs: 10, maxMs: 300 } });
    const delays: number[] = [];
    await client.task('tsk_1').wait({ onRetry: (_e, d) => delays.push(d) });
    expect(delays).toEqual([300]);
  });

  it('throws at once what the server means: an unknown task is not retried', async () => {
    const s = await serve([
      json(400, {
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32602, message: 'Task not found or expired' },
      }),
    ]);
    server = s.server;
    const client = createClient({ url: s.url });
    const error = await client
      .task('tsk_gone')
      .wait()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({
      code: -32602,
      httpStatus: 400,
      message: 'Task not found or expired',
    });
    expect(s.served()).toBe(1);
  });
});
