import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../src/index.js';

/**
 * A listen stream that stops sending without closing: what a client sees when the replica it
 * listens on loses power or is partitioned away (no FIN ever arrives). The server here answers
 * `subscriptions/listen` with an event stream and `tasks/get` with the finished task.
 */
const TASK_ID = 'tsk_silent_0001';
const COMPLETED = {
  resultType: 'complete',
  taskId: TASK_ID,
  status: 'completed',
  result: { content: [] },
};

interface Stream {
  res: ServerResponse;
  closedByClient: Promise<void>;
}

async function serve(onListen: (stream: Stream) => void) {
  const methods: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as { id: number; method: string };
      methods.push(body.method);
      if (body.method === 'subscriptions/listen') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
        onListen({ res, closedByClient: once(res, 'close').then(() => undefined) });
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: COMPLETED }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}/mcp`, methods };
}

const event = (params: Record<string, unknown>) =>
  `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tasks', params })}\n\n`;

/** Follows the task to its end with an idle timeout of 300 ms: the statuses seen, the retries. */
async function follow(
  url: string,
  onSnapshot: (seen: readonly string[]) => Promise<void> = () => Promise.resolve(),
) {
  const client = createClient({
    url,
    streamIdleTimeoutMs: 300,
    backoff: { initialMs: 10, maxMs: 50 },
  });
  const retries: string[] = [];
  const seen: string[] = [];
  for await (const snapshot of client.task(TASK_ID).subscribe({
    onRetry: (error) => retries.push((error as Error).message),
  })) {
    seen.push(snapshot.status);
    await onSnapshot(seen);
  }
  return { seen, retries };
}

/** Keep-alive comments every 100 ms, then the terminal event after `endAfterMs`. */
function keepAliveThenComplete(res: ServerResponse, endAfterMs: number): void {
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 100);
  setTimeout(() => {
    clearInterval(keepAlive);
    res.end(event(COMPLETED));
  }, endAfterMs);
}

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
});

describe('a listen stream that goes silent without closing', () => {
  it('is taken for dead after the idle timeout, released, and the task fetched', async () => {
    const streams: Stream[] = [];
    const s = await serve((stream) => {
      streams.push(stream);
      stream.res.write(event({ taskId: TASK_ID, status: 'working' }));
      // …and then nothing, with the connection left open.
    });
    server = s.server;
    const { seen, retries } = await follow(s.url);

    expect(seen).toEqual(['working', 'completed']);
    expect(retries).toEqual([
      'the event stream sent nothing, not even a keep-alive, for 300 ms; presumed dead',
    ]);
    // The silent stream's connection was let go by the client, not left open.
    await streams[0]!.closedByClient;
    expect(s.methods).toEqual(['subscriptions/listen', 'tasks/get']);
  });

  it('stays open while keep-alive comments arrive, however long no event comes', async () => {
    // Ten keep-alives (over three idle timeouts) before the task finishes.
    const s = await serve(({ res }) => keepAliveThenComplete(res, 1_000));
    server = s.server;
    const { seen, retries } = await follow(s.url);

    expect(seen).toEqual(['completed']);
    expect(retries).toEqual([]);
    expect(s.methods).toEqual(['subscriptions/listen']);
  });

  it('is not taken for dead while the caller is busy with a snapshot and events wait unread', async () => {
    const s = await serve(({ res }) => {
      res.write(event({ taskId: TASK_ID, status: 'input_required' }));
      // An event the caller will not read for a while, then keep-alives only.
      setTimeout(() => res.write(event({ taskId: TASK_ID, status: 'working' })), 50);
      keepAliveThenComplete(res, 1_200);
    });
    server = s.server;
    const { seen, retries } = await follow(s.url, async (sofar) => {
      // A person answering a prompt: far longer than the idle timeout, with a snapshot queued.
      if (sofar.length === 1) await new Promise((resolve) => setTimeout(resolve, 900));
    });

    expect(seen).toEqual(['input_required', 'working', 'completed']);
    expect(retries).toEqual([]);
    expect(s.methods).toEqual(['subscriptions/listen']);
  });
});
