import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';

/**
 * A load balancer at the TCP level: each new connection goes to the next upstream in turn, and
 * to the one after when it refuses. Bytes are piped as they come (no buffering, so SSE flows).
 * A dead upstream's connections are cut, as a real balancer cuts them.
 */
export interface TcpProxy {
  url: string;
  /** Open client connections per upstream port. */
  open(): Map<number, number>;
  /** Every upstream port a connection was made to, in order. */
  history: number[];
  close(): Promise<void>;
}

export async function startTcpProxy(upstreamPorts: number[]): Promise<TcpProxy> {
  let next = 0;
  const open = new Map<number, Set<Socket>>();
  const history: number[] = [];
  const connect = (client: Socket, attempt: number) => {
    if (attempt >= upstreamPorts.length) {
      client.destroy();
      return;
    }
    const port = upstreamPorts[next++ % upstreamPorts.length]!;
    const upstream = createConnection({ host: '127.0.0.1', port });
    upstream.once('error', () => {
      if (!upstream.readyState.startsWith('open')) connect(client, attempt + 1);
    });
    upstream.once('connect', () => {
      history.push(port);
      const sockets = open.get(port) ?? new Set<Socket>();
      open.set(port, sockets);
      sockets.add(client);
      client.pipe(upstream);
      upstream.pipe(client);
      const cut = () => {
        sockets.delete(client);
        client.destroy();
        upstream.destroy();
      };
      upstream.on('close', cut);
      upstream.on('error', cut);
      client.on('close', cut);
      client.on('error', cut);
      client.resume();
    });
  };
  const server: Server = createServer({ pauseOnConnect: true }, (client) => connect(client, 0));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    history,
    open: () => new Map([...open].map(([port, sockets]) => [port, sockets.size])),
    async close() {
      for (const sockets of open.values()) for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
