// The fallback load balancer when nginx is not installed: the same behaviour as
// infra/nginx/nginx.conf for what the stack needs — round robin with no stickiness, every
// response streamed as it arrives (SSE), no upstream keep-alive, and a retry on the next gateway
// only when the connect failed (nothing was sent). Run as its own process:
//   node node-proxy.js <listen-port> <host:port>[,<host:port>…]
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';

const [portArg, upstreamArg] = process.argv.slice(2);
const upstreams = (upstreamArg ?? '').split(',').map((entry) => {
  const [host, port] = entry.split(':');
  return { host: host ?? '127.0.0.1', port: Number(port) };
});
if (!portArg || upstreams.some((u) => !Number.isInteger(u.port) || u.port <= 0)) {
  process.stderr.write('usage: node-proxy <listen-port> <host:port>[,<host:port>…]\n');
  process.exit(2);
}

let next = 0;

function forward(req: IncomingMessage, res: ServerResponse, attempt: number): void {
  const target = upstreams[next++ % upstreams.length];
  if (target === undefined) return;
  let connected = false;
  const upstream = request({
    host: target.host,
    port: target.port,
    method: req.method,
    path: req.url,
    headers: {
      ...req.headers,
      connection: 'close',
      'x-forwarded-for': req.socket.remoteAddress ?? '',
    },
    agent: false,
  });
  upstream.on('socket', (socket) =>
    socket.once('connect', () => {
      connected = true;
      req.pipe(upstream);
    }),
  );
  upstream.on('response', (reply) => {
    res.writeHead(reply.statusCode ?? 502, reply.headers);
    res.flushHeaders();
    reply.pipe(res);
    // pipe() neither ends nor breaks `res` when the upstream dies mid-response (a gateway killed
    // during a listen stream): break the client's connection too, as nginx does, or a client
    // waiting on that stream would wait for ever instead of reconnecting.
    reply.on('close', () => {
      if (!reply.complete) res.destroy();
    });
  });
  upstream.on('error', () => {
    if (!connected && attempt + 1 < upstreams.length) {
      forward(req, res, attempt + 1);
      return;
    }
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway\n');
    else res.destroy();
  });
  // The client left (a closed listen stream): close the upstream side too.
  res.on('close', () => upstream.destroy());
}

const server = createServer((req, res) => forward(req, res, 0));
server.listen(Number(portArg), '127.0.0.1', () =>
  process.stdout.write(`node proxy on 127.0.0.1:${portArg} → ${upstreamArg}\n`),
);
const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
