// The stack end to end: real nginx from infra/ in front of two real gateway processes and a
// worker, on a database and Redis prefix of this file's own, with ephemeral ports.
import {
  createTestDatabase,
  createTestRedis,
  startTcpProxy,
  type TcpProxy,
  type TestDatabase,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type StackHandle } from '../src/index.js';
import { mcp, mcpRequest, requestCount, sseMessages } from './mcp.js';

let db: TestDatabase;
let stack: StackHandle;
let alice: string;
/** worker-1's own links to Postgres and Redis (the `workerConnections` option). */
let workerPostgres: TcpProxy;
let workerRedis: TcpProxy;

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function pollStatus(taskId: string, until: (status: string) => boolean): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const { body } = await mcp(stack.url, alice, 'tasks/get', { taskId });
    const status = String(body.result?.status);
    if (until(status)) return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`task ${taskId} never reached the expected status`);
}

beforeAll(async () => {
  db = await createTestDatabase('stack');
  const redis = await createTestRedis('stack');
  workerPostgres = await startTcpProxy({ target: db.connectionString });
  workerRedis = await startTcpProxy({ target: redis.url });
  stack = await startStack({
    gateways: 2,
    workers: 1,
    databaseUrl: db.connectionString,
    redisUrl: redis.url,
    redisPrefix: redis.prefix,
    proxyPort: 0,
    env: { LOG_LEVEL: 'warn', REPORT_STEP_MS: '50' },
    workerConnections: (workerId) =>
      workerId === 'worker-1'
        ? {
            databaseUrl: workerPostgres.urlFor(db.connectionString),
            redisUrl: workerRedis.urlFor(redis.url),
          }
        : {},
  });
  alice = stack.tokens.alice ?? '';
});

afterAll(async () => {
  await stack?.stop();
  await workerPostgres?.close();
  await workerRedis?.close();
  await db?.drop();
});

describe('startStack', () => {
  it('hands back the endpoint, the demo tokens and every process with its identity', () => {
    expect(stack.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(stack.tokens).toEqual({ alice: 'demo-token-alice', mallory: 'demo-token-mallory' });
    expect(stack.processes.map((p) => [p.name, p.role])).toEqual([
      ['gateway-1', 'gateway'],
      ['gateway-2', 'gateway'],
      ['worker-1', 'worker'],
      ['proxy', 'proxy'],
    ]);
    expect(stack.workers[0]?.workerId).toBe('worker-1');
    for (const p of stack.processes) expect(alive(p.pid), p.name).toBe(true);
  });

  it('passes /healthz through the proxy', async () => {
    const response = await fetch(new URL('/healthz', stack.url));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('spreads requests round robin over the gateways, with no stickiness', async () => {
    const gateways = stack.gateways.map((g) => g.url ?? '');
    const before = await Promise.all(gateways.map((url) => requestCount(url, 'tools/list')));
    for (let i = 0; i < 6; i++) {
      const { status, body } = await mcp(stack.url, alice, 'tools/list', {});
      expect(status).toBe(200);
      expect(Array.isArray(body.result?.tools)).toBe(true);
    }
    const after = await Promise.all(gateways.map((url) => requestCount(url, 'tools/list')));
    expect(after.map((count, i) => count - (before[i] ?? 0))).toEqual([3, 3]);
  });

  it('runs a task through the proxy to a worker and back', async () => {
    const created = await mcp(stack.url, alice, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 1, label: 'stack' },
    });
    expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = String(created.body.result?.taskId);
    expect(await pollStatus(taskId, (s) => s !== 'working')).toBe('completed');
  });

  it('connects a worker given its own URLs (here TCP proxies) through those', () => {
    // The worker holds its LISTEN and BullMQ connections open; the gateways never use these.
    expect(workerPostgres.openConnections()).toBeGreaterThan(0);
    expect(workerRedis.openConnections()).toBeGreaterThan(0);
  });

  it('delivers a subscriptions/listen event through nginx while the stream is still open', async () => {
    const created = await mcp(stack.url, alice, 'tools/call', {
      name: 'generate_report',
      arguments: { size: 'small' },
    });
    const taskId = String(created.body.result?.taskId);
    const response = await mcpRequest(stack.url, alice, 'subscriptions/listen', {
      notifications: { taskIds: [taskId] },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const stream = sseMessages(response);
    expect((await stream.next(10_000)) as object).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
    });
    // The worker builds the outline and asks for approval: that change must reach us now, with
    // the stream open (an input_required task never ends the stream), not when it closes.
    let status = '';
    while (status !== 'input_required') {
      const message = await stream.next(30_000);
      expect(message).not.toBe('timeout');
      expect(message).not.toBe('end');
      if (typeof message === 'object' && message.method === 'notifications/tasks') {
        status = String(message.params?.status);
      }
    }
    expect(await stream.next(500)).toBe('timeout');
    // Ending the task ends the stream: the cancellation, then the graceful end.
    await mcp(stack.url, alice, 'tasks/cancel', { taskId });
    const rest: unknown[] = [];
    for (;;) {
      const message = await stream.next(30_000);
      if (message === 'end' || message === 'timeout') {
        rest.push(message);
        break;
      }
      rest.push(message.method ?? 'result');
    }
    expect(rest.slice(-2)).toEqual(['result', 'end']);
  });

  it('keeps serving through the proxy while a gateway is killed, and restarts it on its port', async () => {
    const [first] = stack.gateways;
    if (!first) throw new Error('no gateway');
    const oldPid = first.pid;
    first.kill('SIGKILL');
    await first.exited();
    for (let i = 0; i < 4; i++) {
      expect((await mcp(stack.url, alice, 'tools/list', {})).status).toBe(200);
    }
    await first.start();
    expect(first.pid).not.toBe(oldPid);
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
  });

  it('stops every process gracefully, nginx included', async () => {
    const pids = stack.processes.map((p) => p.pid);
    await stack.stop();
    expect(stack.processes.map((p) => p.running)).toEqual([false, false, false, false]);
    expect(pids.filter(alive)).toEqual([]);
    // Apps exit 0 on SIGTERM: a graceful stop, not a kill.
    expect(await Promise.all(stack.processes.map((p) => p.exited()))).toEqual([0, 0, 0, 0]);
  });
});
