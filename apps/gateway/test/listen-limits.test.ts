import { serve, type ServerType } from '@hono/node-server';
import { claimLease, saveCheckpoint } from '@mcp-tasks/store';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_LISTEN_LIMITS,
  createLoadQueue,
  type ListenLimits,
} from '../src/mcp/listen-limits.js';
import {
  buildGateway,
  startInfrastructure,
  type GatewayUnderTest,
  type Infrastructure,
} from './support/harness.js';
import {
  createReportTask,
  remote,
  rpcBody,
  rpcHeaders,
  sseReader,
  type RpcOptions,
} from './support/rpc.js';

/** Issue 11, item 6: every subscriptions/listen limit, over real HTTP with real SSE clients. */
let infra: Infrastructure;
const running: { server: ServerType; gw: GatewayUnderTest }[] = [];

beforeAll(async () => {
  infra = await startInfrastructure('gw_listen_limits');
});
afterEach(async () => {
  for (const { server, gw } of running.splice(0)) {
    gw.shutdown.abort();
    await new Promise<void>((resolve) => {
      const http = server as Server;
      http.close(() => resolve());
      http.closeAllConnections();
    });
  }
});
afterAll(async () => {
  await infra?.close();
});

async function startGateway(limits: Partial<ListenLimits>) {
  const gw = buildGateway(infra, {
    config: { listenLimits: { ...DEFAULT_LISTEN_LIMITS, ...limits } },
  });
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: gw.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  running.push({ server, gw });
  const { port } = server.address() as AddressInfo;
  return { gw, base: `http://127.0.0.1:${port}`, port };
}

async function listen(
  base: string,
  notifications: Record<string, unknown>,
  options: RpcOptions = {},
) {
  const params = { notifications };
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: rpcHeaders('subscriptions/listen', params, options),
    body: JSON.stringify(rpcBody('subscriptions/listen', params, { id: 'sub', ...options })),
  });
  return response;
}

async function openStream(base: string, taskIds: string[], options: RpcOptions = {}) {
  const response = await listen(base, { taskIds }, options);
  expect(response.status).toBe(200);
  const events = sseReader(response);
  expect((await events.next())?.data).toMatchObject({
    method: 'notifications/subscriptions/acknowledged',
  });
  return events;
}

describe('subscriptions/listen limits', () => {
  it('caps open streams per principal (429) and frees the slot when a stream closes', async () => {
    const { base } = await startGateway({ maxStreamsPerPrincipal: 2 });
    const taskId = await createReportTask(remote(base));
    const first = await openStream(base, [taskId]);
    await openStream(base, [taskId]);
    const third = await listen(base, { taskIds: [taskId] });
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('5');
    expect(await third.json()).toEqual({
      jsonrpc: '2.0',
      id: 'sub',
      error: {
        code: -32600,
        message:
          'Too many open subscriptions/listen streams for this caller: at most 2 per principal on a replica (MCP_LISTEN_STREAMS_PER_PRINCIPAL); close one, or name several taskIds in one listen',
        data: { limit: 2 },
      },
    });
    // Another principal is not affected.
    const bobTask = await createReportTask(remote(base), { as: 'bob' });
    await openStream(base, [bobTask], { as: 'bob' });
    // Closing one of alice's streams gives her slot back.
    await first.cancel();
    let status = 0;
    for (let attempt = 0; attempt < 100 && status !== 200; attempt += 1) {
      const again = await listen(base, { taskIds: [taskId] });
      status = again.status;
      await again.body?.cancel();
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(200);
  });

  it('caps open streams per replica (503, retry elsewhere)', async () => {
    const { base } = await startGateway({ maxStreams: 2 });
    const aliceTask = await createReportTask(remote(base));
    const bobTask = await createReportTask(remote(base), { as: 'bob' });
    await openStream(base, [aliceTask]);
    await openStream(base, [bobTask], { as: 'bob' });
    const eveTask = await createReportTask(remote(base), { as: 'eve' });
    const refused = await listen(base, { taskIds: [eveTask] }, { as: 'eve' });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: 'sub',
      error: {
        code: -32603,
        message:
          'This replica has its maximum of 2 open subscriptions/listen streams (MCP_LISTEN_MAX_STREAMS); retry (another replica may have room)',
        data: { limit: 2 },
      },
    });
  });

  it('caps taskIds per listen (-32602)', async () => {
    const { base } = await startGateway({ maxTaskIds: 3 });
    const ids = ['tsk_a', 'tsk_b', 'tsk_c', 'tsk_d'];
    const refused = await listen(base, { taskIds: ids });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      jsonrpc: '2.0',
      id: 'sub',
      error: {
        code: -32602,
        message: 'Too many taskIds: at most 3 per subscriptions/listen (MCP_LISTEN_MAX_TASK_IDS)',
        data: { limit: 3 },
      },
    });
  });

  it('ends a listen that names no tasks right after the acknowledgement', async () => {
    const { base } = await startGateway({});
    const response = await listen(base, { toolsListChanged: true });
    expect(response.status).toBe(200);
    const events = sseReader(response);
    expect((await events.next())?.data).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        notifications: {},
        _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub' },
      },
    });
    expect((await events.next())?.data).toMatchObject({
      jsonrpc: '2.0',
      id: 'sub',
      result: { resultType: 'complete' },
    });
    expect(await events.next()).toBeUndefined();
  });

  it('drops a stream whose client stopped reading, with a clear last message', async () => {
    const bound = 64 * 1024;
    const { base, port, gw } = await startGateway({ maxBufferedBytes: bound });
    const taskId = await createReportTask(remote(base));
    const claim = await claimLease(infra.db, taskId, 'test-worker', 600_000);
    if (claim === null) throw new Error('not claimable');

    // A raw HTTP client that reads nothing after sending its request.
    const params = { notifications: { taskIds: [taskId] } };
    const body = JSON.stringify(rpcBody('subscriptions/listen', params, { id: 'slow' }));
    const headers = rpcHeaders('subscriptions/listen', params);
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.pause();
    const head = [`POST /mcp HTTP/1.1`, `Host: 127.0.0.1:${port}`];
    headers.forEach((value, name) => head.push(`${name}: ${value}`));
    head.push(`Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close');
    socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);

    // Each committed change is one large snapshot; keep changing until the server drops the
    // stream (the kernel's socket buffers absorb the first megabytes).
    const dropped = async () =>
      (await gw.metrics.registry.getSingleMetricAsString('mcp_sse_streams_dropped_total')).endsWith(
        ' 1',
      );
    const filler = 'x'.repeat(60 * 1024);
    let changes = 0;
    while (!(await dropped()) && changes < 2000) {
      changes += 1;
      await saveCheckpoint(infra.db, claim.fence, { changes }, `${changes} ${filler}`);
      if (changes % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await dropped()).toBe(true);

    // Now read everything: the stream ends, and its last event says why.
    const ended = new Promise<void>((resolve) => socket.once('end', resolve));
    socket.resume();
    await ended;
    const text = Buffer.concat(received).toString('utf8');
    expect(text.startsWith('HTTP/1.1 200')).toBe(true);
    const events = text.split('\n\n').filter((block) => block.includes('data: '));
    const last = events.at(-1) ?? '';
    expect(JSON.parse(last.slice(last.indexOf('data: ') + 6))).toEqual({
      jsonrpc: '2.0',
      id: 'slow',
      error: {
        code: -32603,
        message: `Listen stream dropped: the client fell more than ${bound} bytes behind (MCP_LISTEN_BUFFER_BYTES); listen again to get current snapshots`,
        data: { reason: 'slow_consumer', maxBufferedBytes: bound },
      },
    });
    socket.destroy();
  }, 120_000);

  it('reloads every stream after a LISTEN reconnect through the bounded queue', async () => {
    const { base } = await startGateway({ loadConcurrency: 1 });
    const streams = [];
    for (let i = 0; i < 8; i += 1) {
      const taskId = await createReportTask(remote(base));
      const events = await openStream(base, [taskId]);
      expect((await events.next())?.data).toMatchObject({ method: 'notifications/tasks' });
      streams.push({ taskId, events });
    }
    infra.resync();
    for (const { taskId, events } of streams) {
      expect((await events.next())?.data).toMatchObject({
        method: 'notifications/tasks',
        params: { taskId, status: 'working' },
      });
    }
  });
});

describe('the listen load queue', () => {
  it('runs at most `concurrency` loads at once and queues the rest', async () => {
    const queue = createLoadQueue(2);
    let running = 0;
    let peak = 0;
    const job = async () => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      running -= 1;
    };
    await Promise.all(Array.from({ length: 10 }, () => queue(job)));
    expect(peak).toBe(2);
  });
});
