// The fallback proxy as a real process in front of real HTTP servers: round robin, a streamed
// response delivered chunk by chunk (and ended when its upstream dies), a refused upstream
// skipped, and the client's /healthz.
import { createServer, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { freePort, ManagedProcess, nodeArguments, repoRoot } from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const streams: ServerResponse[] = [];
const servers: Server[] = [];
let proxy: ManagedProcess;
let base: string;

async function upstream(name: string): Promise<number> {
  const server = createServer((req, res) => {
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: first from ${name}\n\n`);
      streams.push(res); // the test writes the rest
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

beforeAll(async () => {
  const a = await upstream('a');
  const b = await upstream('b');
  const closed = await freePort(); // nothing listens: a gateway that was killed
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  proxy = new ManagedProcess(
    {
      name: 'proxy',
      role: 'proxy',
      command: process.execPath,
      args: [
        ...nodeArguments('tooling/stack/src/node-proxy.ts'),
        String(port),
        `127.0.0.1:${a},127.0.0.1:${closed},127.0.0.1:${b}`,
      ],
      cwd: repoRoot,
      env: process.env,
      readyUrl: `${base}/healthz`,
      stopSignal: 'SIGTERM',
    },
    () => undefined,
  );
  await proxy.start();
});

afterAll(async () => {
  expect(await proxy?.stop()).toBe(0);
  for (const res of streams) res.end();
  for (const server of servers) server.close();
});

describe('the Node fallback proxy', () => {
  it('spreads requests round robin and skips a refused upstream without an error', async () => {
    const answers: string[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await fetch(`${base}/healthz`);
      expect(response.status).toBe(200);
      answers.push(await response.text());
    }
    expect(answers.filter((a) => a === 'a').length).toBe(3);
    expect(answers.filter((a) => a === 'b').length).toBe(3);
  });

  it('delivers each streamed chunk as it is written, while the response is open', async () => {
    const response = await fetch(`${base}/stream`);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    expect(decoder.decode((await reader.read()).value)).toMatch(/^data: first from [ab]\n\n$/);
    streams.at(-1)?.write('data: second\n\n');
    expect(decoder.decode((await reader.read()).value)).toBe('data: second\n\n');
    await reader.cancel();
  });

  it("ends the client's stream when its upstream dies mid-response, so the client reconnects", async () => {
    const response = await fetch(`${base}/stream`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/^data: first/);
    // A gateway killed mid-stream: its socket is gone without the response's end.
    streams.at(-1)?.socket?.destroy();
    const outcome = await Promise.race([
      reader.read().then(
        ({ done }) => (done ? 'ended' : 'more data'),
        () => 'ended',
      ),
      new Promise((resolve) => setTimeout(() => resolve('still open after 5 s'), 5_000)),
    ]);
    expect(outcome).toBe('ended');
  });
});
