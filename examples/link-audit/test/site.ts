import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small real website for the audit to crawl, with hooks to freeze it mid-step: `hold(path)`
 * keeps the next request for `path` open until `release(path)` (or until the client goes away),
 * so a test knows a step is in flight and can cancel or kill its worker right then.
 */
export interface TestSite {
  url: string;
  /** Every request in order: path, the Idempotency-Key sent, and whether the client aborted it. */
  requests: { path: string; key: string | undefined; aborted: boolean }[];
  hits(path: string): number;
  hold(path: string): void;
  /** Resolves once a held request for `path` has arrived. */
  held(path: string): Promise<void>;
  release(path: string): void;
  close(): Promise<void>;
}

export const SITE_PAGES: Record<string, { status: number; body: string }> = {
  '/': {
    status: 200,
    body: `<html><head><title>Home</title></head><body><h1>Welcome home</h1>
      <a href="/a">A</a> <a href="/b#top">B</a> <a href="c">C</a> <a href="/missing">gone</a>
      <a href="https://example.invalid/elsewhere">elsewhere</a> <a href="mailto:x@y.z">mail</a>
      <script>var ignored = "not words";</script></body></html>`,
  },
  '/a': { status: 200, body: '<title>Page A</title><p>alpha beta gamma</p><a href="/">home</a>' },
  '/b': { status: 200, body: '<title>Page B</title><p>one two</p>' },
  '/c': { status: 200, body: '<title>Page C</title><p>three</p>' },
};

/** The site's pages and the one broken link among them. */
const CRAWLED_PATHS = new Set([...Object.keys(SITE_PAGES), '/missing']);

export async function startTestSite(): Promise<TestSite> {
  const holds = new Map<
    string,
    { arrived: Promise<void>; arrive: () => void; release?: () => void }
  >();
  const requests: TestSite['requests'] = [];

  function respond(path: string, res: ServerResponse): void {
    const page = SITE_PAGES[path];
    if (page === undefined) {
      res.writeHead(404, { 'Content-Type': 'text/html' }).end('<title>Not found</title>');
      return;
    }
    res.writeHead(page.status, { 'Content-Type': 'text/html; charset=utf-8' }).end(page.body);
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    // Only what the crawl can ask for is recorded: test files run at once, and another file's
    // readiness poll can reach this port when the site takes one a child process was handed
    // (CI saw a request without an Idempotency-Key land in `requests`).
    if (!CRAWLED_PATHS.has(path)) {
      respond(path, res);
      return;
    }
    const key = req.headers['idempotency-key'];
    const entry = { path, key: Array.isArray(key) ? key[0] : key, aborted: false };
    requests.push(entry);
    res.on('close', () => {
      if (!res.writableFinished) entry.aborted = true;
    });
    const hold = holds.get(path);
    if (hold !== undefined && hold.release === undefined) {
      hold.release = () => respond(path, res);
      hold.arrive();
      return;
    }
    respond(path, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  function release(path: string): void {
    const hold = holds.get(path);
    holds.delete(path);
    hold?.release?.();
  }

  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    hits: (path) => requests.filter((request) => request.path === path).length,
    hold(path) {
      let arrive = () => {};
      const arrived = new Promise<void>((resolve) => (arrive = resolve));
      holds.set(path, { arrived, arrive });
    },
    async held(path) {
      const hold = holds.get(path);
      if (hold === undefined) throw new Error(`${path} is not held`);
      await hold.arrived;
    },
    release,
    async close() {
      for (const path of [...holds.keys()]) release(path);
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
