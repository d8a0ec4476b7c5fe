import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from './support/cli.js';

/**
 * TRACEPARENT / TRACESTATE at the wire: a plain HTTP server records each JSON-RPC request the
 * real `mcp-tasks` binary sends and answers `tools/list` with no tools.
 */
let server: Server;
let url: string;
const received: { method: string; _meta: Record<string, unknown> }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const message = JSON.parse(body) as {
        id: number;
        method: string;
        params: { _meta: Record<string, unknown> };
      };
      received.push({ method: message.method, _meta: message.params._meta });
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools: [] } }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  received.length = 0;
});

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const traceKeys = (meta: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(meta).filter(([key]) => /^(traceparent|tracestate|baggage)$/.test(key)),
  );

describe('mcp-tasks with TRACEPARENT / TRACESTATE', () => {
  it('sends them as the unprefixed _meta keys of its requests', async () => {
    const run = await runCli(['tools', '--json'], {
      MCP_URL: url,
      MCP_TOKEN: 'any',
      TRACEPARENT,
      TRACESTATE: 'vendor=abc,other=1',
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(received.map((r) => r.method)).toEqual(['tools/list']);
    expect(traceKeys(received[0]!._meta)).toEqual({
      traceparent: TRACEPARENT,
      tracestate: 'vendor=abc,other=1',
    });
  });

  it('sends no trace keys when TRACEPARENT is unset or empty, and drops a lone TRACESTATE', async () => {
    const run = await runCli(['tools', '--json'], {
      MCP_URL: url,
      MCP_TOKEN: 'any',
      TRACEPARENT: '',
      TRACESTATE: 'vendor=abc',
    });
    expect(run.code).toBe(0);
    expect(traceKeys(received[0]!._meta)).toEqual({});
  });

  it('refuses a malformed TRACEPARENT with exit 2, naming the variable and the format, and sends nothing', async () => {
    const value = TRACEPARENT.toUpperCase();
    const run = await runCli(['tools'], { MCP_URL: url, MCP_TOKEN: 'any', TRACEPARENT: value });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      `mcp-tasks: TRACEPARENT=${JSON.stringify(value)} is not a traceparent: expected 00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>, lowercase, ids not all zeros (W3C Trace Context)`,
    );
    expect(received).toEqual([]);
  });

  it('refuses a TRACESTATE that is not printable ASCII', async () => {
    const run = await runCli(['tools'], {
      MCP_URL: url,
      MCP_TOKEN: 'any',
      TRACEPARENT,
      TRACESTATE: 'vendor=\u00e9',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('TRACESTATE="vendor=é" is not a tracestate');
    expect(received).toEqual([]);
  });
});
