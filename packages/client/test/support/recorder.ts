import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { once } from 'node:events';
import { Readable } from 'node:stream';

export interface Recorded {
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/**
 * A real HTTP hop that writes down every request it forwards to the gateway, byte for byte
 * decoded, and streams the gateway's reply back unchanged.
 */
export async function startRecorder(target: string): Promise<{
  url: string;
  recorded: Recorded[];
  close(): Promise<void>;
}> {
  const recorded: Recorded[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString();
      if (req.method === 'POST') {
        recorded.push({ headers: req.headers, body: JSON.parse(text) as Record<string, unknown> });
      }
      const headers = new Headers();
      for (const [key, value] of Object.entries(req.headers)) {
        if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(key)) {
          headers.set(key, value);
        }
      }
      const upstream = await fetch(new URL(req.url ?? '/', target), {
        method: req.method ?? 'GET',
        headers,
        ...(req.method === 'POST' ? { body: text } : {}),
      });
      res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
      if (upstream.body === null) res.end();
      else Readable.fromWeb(upstream.body as never).pipe(res);
    })().catch(() => res.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    recorded,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
