import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { Registry } from 'prom-client';

export interface HealthServer {
  /** From now on /healthz answers 503, so orchestrators stop counting this worker. */
  markShuttingDown(): void;
  close(): Promise<void>;
}

/** /healthz and /metrics on their own port (node:http: the worker has no other HTTP surface). */
export async function startHealthServer(options: {
  port: number;
  host?: string;
  registry: Registry;
}): Promise<HealthServer> {
  let shuttingDown = false;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET') {
      response.writeHead(405).end();
      return;
    }
    if (path === '/healthz') {
      response
        .writeHead(shuttingDown ? 503 : 200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: shuttingDown ? 'shutting_down' : 'ok' }));
      return;
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (body) =>
          response.writeHead(200, { 'content-type': options.registry.contentType }).end(body),
        () => response.writeHead(500).end(),
      );
      return;
    }
    response.writeHead(404).end();
  });
  server.listen(options.port, options.host ?? '0.0.0.0');
  await once(server, 'listening');
  return {
    markShuttingDown: () => {
      shuttingDown = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
