import { createDb, migrateToLatest } from '@mcp-tasks/store';
import {
  createTestDatabase,
  createTestRedis,
  freePort,
  launchProcess,
  type LaunchedProcess,
  type TestDatabase,
  type TestRedis,
} from '@mcp-tasks/testing';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_TOKENS, TOKENS, rpcBody } from './support/rpc.js';

/**
 * Issue 24, item 8: HTTP that Node's parser refuses mid-body is the client's fault. Node answers
 * it 400; the gateway, whose handler was already reading the body, must log it as such (info),
 * not as an unexpected error with a stack trace.
 */
let database: TestDatabase;
let redis: TestRedis;
let gateway: LaunchedProcess;
let port: number;
const BODY_LIMIT = 64 * 1024;

beforeAll(async () => {
  database = await createTestDatabase('gw_malformed_http');
  redis = await createTestRedis('gw_malformed_http');
  const db = createDb({ connectionString: database.connectionString });
  await migrateToLatest(db);
  await db.destroy();
  port = await freePort();
  gateway = await launchProcess({
    entry: 'apps/gateway/src/main.ts',
    env: {
      DATABASE_URL: database.connectionString,
      REDIS_URL: redis.url,
      REDIS_PREFIX: redis.prefix,
      MCP_AUTH: 'tokens',
      MCP_TOKENS,
      REQUEST_STATE_SECRET: 'malformed-http-request-state-secret-0123456789',
      LOG_LEVEL: 'info',
      PORT: String(port),
      HOST: '127.0.0.1',
      MCP_MAX_BODY_BYTES: String(BODY_LIMIT),
    },
    readyUrl: `http://127.0.0.1:${port}/healthz`,
  });
});
afterAll(async () => {
  await gateway?.stop();
  await redis?.deleteKeys();
  await database?.drop();
});

/** Sends raw bytes and resolves with everything the server wrote back before it closed. */
function sendRaw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.write(bytes, 'latin1');
  });
}

/** The gateway's JSON log lines from `from` on. */
function logLinesSince(from: number): { level: number; msg: string; err?: unknown }[] {
  return gateway
    .output()
    .slice(from)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; err?: unknown });
}

describe('a malformed chunked body', () => {
  it('is answered 400 and logged as a client fault, without a stack trace', async () => {
    const from = gateway.output().length;
    const body = JSON.stringify(rpcBody('server/discover', {}));
    const answer = await sendRaw(
      [
        'POST /mcp HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        'Content-Type: application/json',
        'Accept: application/json, text/event-stream',
        `Authorization: Bearer ${TOKENS.alice}`,
        'MCP-Protocol-Version: 2026-07-28',
        'Mcp-Method: server/discover',
        'Transfer-Encoding: chunked',
        '',
        // A well-formed first chunk, then a chunk-size line that is not hexadecimal.
        '10',
        body.slice(0, 16),
        'zz-not-a-chunk-size',
        '',
        '',
      ].join('\r\n'),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    // The access line of the refused request is written when the handler ends.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const lines = logLinesSince(from);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(lines.some((line) => line.msg.startsWith('Invalid Request: the request body'))).toBe(
      true,
    );
  });
});

/**
 * Writes the whole request before reading anything, as simple clients do, slowly (past
 * @hono/node-server's 500 ms drain), then reads what the server wrote before it closed.
 */
function sendSlowlyThenRead(head: string, body: Buffer, pieces: number, pauseMs: number) {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.pause();
    socket.on('error', reject);
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    void (async () => {
      socket.write(head, 'latin1');
      const size = Math.ceil(body.length / pieces);
      for (let at = 0; at < body.length; at += size) {
        await new Promise((done) => setTimeout(done, pauseMs));
        socket.write(body.subarray(at, at + size));
      }
      socket.resume();
    })();
  });
}

describe('a body over MCP_MAX_BODY_BYTES', () => {
  it('is read and dropped up to four times the limit, so a client that writes it all first still reads its 413', async () => {
    const body = Buffer.alloc(BODY_LIMIT * 2, 'y');
    const head = [
      'POST /mcp HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      'Content-Type: application/json',
      'Accept: application/json, text/event-stream',
      `Authorization: Bearer ${TOKENS.alice}`,
      'MCP-Protocol-Version: 2026-07-28',
      'Mcp-Method: server/discover',
      `Content-Length: ${body.length}`,
      'Connection: close',
      '',
      '',
    ].join('\r\n');
    const answer = await sendSlowlyThenRead(head, body, 8, 150);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: `Request body exceeds ${BODY_LIMIT} bytes` },
    });
  });
});
