import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

let echo: Server;
let echoPort: number;
let proxy: TcpProxy;

beforeAll(async () => {
  echo = createServer((socket) => {
    socket.on('error', () => undefined); // the proxy's cut resets it
    socket.pipe(socket);
  });
  echo.listen(0, '127.0.0.1');
  await once(echo, 'listening');
  echoPort = (echo.address() as { port: number }).port;
  proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: echoPort } });
});

afterAll(async () => {
  await proxy.close();
  await new Promise((resolve) => echo.close(resolve));
});

async function connect(): Promise<Socket> {
  const socket = createConnection({ host: proxy.host, port: proxy.port });
  await once(socket, 'connect');
  return socket;
}

/** Resolves with what came back within waitMs, or null if nothing did. */
async function roundTrip(socket: Socket, text: string, waitMs = 300): Promise<string | null> {
  socket.write(text);
  return Promise.race([
    once(socket, 'data').then(([chunk]) => (chunk as Buffer).toString()),
    new Promise<null>((resolve) => setTimeout(() => resolve(null), waitMs)),
  ]);
}

/** Resolves with the error code the socket fails with, or 'closed' for a plain close. */
function failure(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    socket.once('close', () => resolve('closed'));
  });
}

describe('the fault-injecting TCP proxy', () => {
  it('forwards bytes both ways and rewrites URLs to point at itself', async () => {
    const socket = await connect();
    expect(await roundTrip(socket, 'hello')).toBe('hello');
    expect(proxy.openConnections()).toBe(1);
    socket.destroy();
    expect(proxy.urlFor('postgres://u:secret@db.example:5432/app')).toBe(
      `postgres://u:secret@127.0.0.1:${proxy.port}/app`,
    );
  });

  it('cut resets open connections; refuse resets new ones until heal', async () => {
    const open = await connect();
    const failed = failure(open);
    proxy.refuse();
    proxy.cut();
    expect(await failed).toBe('ECONNRESET');
    expect(proxy.openConnections()).toBe(0);

    const refused = createConnection({ host: proxy.host, port: proxy.port });
    expect(await failure(refused)).toBe('ECONNRESET');

    proxy.heal();
    const again = await connect();
    expect(await roundTrip(again, 'back')).toBe('back');
    again.destroy();
  });

  it('blackhole drops bytes on open and new connections, and heal lets them through again', async () => {
    const open = await connect();
    proxy.blackhole();
    expect(await roundTrip(open, 'lost')).toBeNull();
    const fresh = await connect();
    expect(await roundTrip(fresh, 'lost too')).toBeNull();
    proxy.heal();
    expect(await roundTrip(fresh, 'found')).toBe('found');
    open.destroy();
    fresh.destroy();
  });
});

describe('held replies', () => {
  it('passes the requests on, keeps the replies in order until heal, then delivers them', async () => {
    const received: string[] = [];
    const recorder = createServer((socket) => {
      socket.on('error', () => undefined); // the proxy's close resets it
      socket.on('data', (chunk) => {
        received.push(chunk.toString());
        socket.write(`re:${chunk.toString()};`);
      });
    });
    recorder.listen(0, '127.0.0.1');
    await once(recorder, 'listening');
    const port = (recorder.address() as { port: number }).port;
    const late = await startTcpProxy({ target: { host: '127.0.0.1', port } });
    try {
      const socket = createConnection({ host: late.host, port: late.port });
      await once(socket, 'connect');
      late.holdReplies();
      expect(late.mode).toBe('hold-replies');
      const replies: string[] = [];
      socket.on('data', (chunk: Buffer) => replies.push(chunk.toString()));
      socket.write('one');
      while (received.length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
      socket.write('two');
      while (received.join('') !== 'onetwo')
        await new Promise((resolve) => setTimeout(resolve, 10));
      // The server acted on both; the client has seen neither answer.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(replies).toEqual([]);
      late.heal();
      while (replies.join('') !== 're:one;re:two;')
        await new Promise((resolve) => setTimeout(resolve, 10));
      socket.write('three');
      while (!replies.join('').endsWith('re:three;'))
        await new Promise((resolve) => setTimeout(resolve, 10));
      socket.destroy();
    } finally {
      await late.close();
      await new Promise((resolve) => recorder.close(resolve));
    }
  });
});

describe('several targets', () => {
  it('sends each new connection to the next target in turn', async () => {
    const named = await Promise.all(
      ['a', 'b'].map(async (name) => {
        const server = createServer((socket) => socket.end(name));
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
        return server;
      }),
    );
    const spread = await startTcpProxy({
      target: named.map((server) => ({
        host: '127.0.0.1',
        port: (server.address() as { port: number }).port,
      })),
    });
    try {
      const answers: string[] = [];
      for (let i = 0; i < 4; i += 1) {
        const socket = createConnection({ host: spread.host, port: spread.port });
        const [chunk] = (await once(socket, 'data')) as [Buffer];
        answers.push(chunk.toString());
        socket.destroy();
      }
      expect(answers).toEqual(['a', 'b', 'a', 'b']);
    } finally {
      await spread.close();
      await Promise.all(named.map((server) => new Promise((resolve) => server.close(resolve))));
    }
  });
});
