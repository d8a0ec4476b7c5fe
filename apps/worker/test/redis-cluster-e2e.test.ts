import { createClient, type McpTasksClient } from '@mcp-tasks/client';
import { createDb, migrateToLatest } from '@mcp-tasks/store';
import {
  createTestDatabase,
  launchTopology,
  redisClusterUnavailableReason,
  startRedisCluster,
  type RedisCluster,
  type TestDatabase,
  type Topology,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_ENV, sleep } from './harness.js';

/**
 * The product on a real Redis Cluster (3 masters, 3 replicas, started here): two gateway and two
 * worker processes given REDIS_CLUSTER_NODES and no REDIS_PREFIX, so the default prefix is the
 * hash-tagged `{mcp-tasks}` and every key of the queue lives on one master. Then that master is
 * killed mid-run: its replica takes over and every acknowledged task still ends.
 */
const unavailable = redisClusterUnavailableReason();
if (unavailable !== null && process.env.CI)
  throw new Error(`Redis Cluster tests cannot run in CI: ${unavailable}`);

const CAPS = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };

let cluster: RedisCluster;
let database: TestDatabase;
let topology: Topology | undefined;
const gatewayUrls: string[] = [];
const clients: McpTasksClient[] = [];
let turn = 0;

async function call(method: string, params: Record<string, unknown>) {
  const client = clients[turn++ % clients.length]!;
  const reply = await client.send(method, params);
  if (reply.message?.error !== undefined)
    throw new Error(`${method} failed (${reply.status}): ${JSON.stringify(reply.message.error)}`);
  expect(reply.status).toBe(200);
  return reply.message!.result!;
}

const terminal = (task: Record<string, unknown>) =>
  ['completed', 'failed', 'cancelled'].includes(task.status as string);

async function pollUntil(
  taskId: string,
  done: (task: Record<string, unknown>) => boolean,
  timeoutMs = 30_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await call('tasks/get', { taskId });
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stuck: ${JSON.stringify(task)}`);
    await sleep(100);
  }
}

describe.skipIf(unavailable !== null)(`the product on a Redis Cluster ${unavailable ?? ''}`, () => {
  beforeAll(async () => {
    cluster = await startRedisCluster();
    database = await createTestDatabase('redis_cluster_e2e');
    const db = createDb({ connectionString: database.connectionString, max: 1 });
    await migrateToLatest(db);
    await db.destroy();
    // No REDIS_URL from the test environment may leak in: the apps must refuse both.
    const common = {
      DATABASE_URL: database.connectionString,
      REDIS_URL: '',
      REDIS_CLUSTER_NODES: cluster.nodesSetting,
      LOG_LEVEL: 'warn',
    };
    topology = await launchTopology({
      gateways: 2,
      workers: 2,
      order: 'sequential',
      env: common,
      gatewayEnv: { MCP_AUTH: 'none' },
      workerEnv: FAST_ENV,
      workerId: (index) => `cluster-w${index}`,
      readyTimeoutMs: 30_000,
    });
    for (const { url } of topology.gateways) {
      gatewayUrls.push(url);
      clients.push(
        createClient({
          url: `${url}/mcp`,
          capabilities: CAPS,
          clientInfo: { name: 'cluster-e2e', version: '1.0.0' },
        }),
      );
    }
  }, 120_000);

  afterAll(async () => {
    await topology?.stop();
    await cluster?.stop();
    await database?.drop();
  });

  it('is ready, and sees the workers consume its queue through the heartbeat', async () => {
    const deadline = Date.now() + 15_000;
    let body: Record<string, unknown> = {};
    while (Date.now() < deadline) {
      body = (await (await fetch(`${gatewayUrls[0]}/readyz`)).json()) as Record<string, unknown>;
      if ((body.workers as { consumers?: number }).consumers === 2) break;
      await sleep(200);
    }
    expect(body).toMatchObject({
      status: 'ready',
      checks: { postgres: 'ok', redis: 'ok' },
      workers: { status: 'consuming', consumers: 2 },
    });
  });

  it('creates, asks, takes the answer and completes a report', async () => {
    const created = await call('tools/call', {
      name: 'generate_report',
      arguments: { size: 'small' },
    });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = created.taskId as string;
    const parked = await pollUntil(taskId, (t) => t.status === 'input_required' || terminal(t));
    expect(Object.keys(parked.inputRequests as object)).toEqual(['approve_outline']);
    await call('tasks/update', {
      taskId,
      inputResponses: { approve_outline: { action: 'accept', content: { approved: true } } },
    });
    const done = await pollUntil(taskId, terminal);
    expect(done).toMatchObject({
      resultType: 'complete',
      taskId,
      status: 'completed',
      result: {
        structuredContent: { size: 'small', format: 'markdown', approved: true, sections: 2 },
      },
    });
  });

  it('cancels a running task', async () => {
    const created = await call('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 60 },
    });
    const taskId = created.taskId as string;
    await pollUntil(taskId, (t) => t.status === 'working');
    await sleep(500);
    expect((await call('tasks/cancel', { taskId })).resultType).toBe('complete');
    const done = await pollUntil(taskId, terminal, 10_000);
    expect(done.status).toBe('cancelled');
  });

  it('runs an MRTR round, then the task it creates', async () => {
    const round1 = await call('tools/call', { name: 'test_tool_with_task', arguments: {} });
    expect(round1.resultType).toBe('input_required');
    const round2 = await call('tools/call', {
      name: 'test_tool_with_task',
      arguments: {},
      inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } } },
      requestState: round1.requestState,
    });
    expect(round2.resultType).toBe('task');
    const done = await pollUntil(round2.taskId as string, terminal);
    expect(done.status).toBe('completed');
  });

  it('loses no task when the master holding the queue is killed mid-run', async () => {
    const create = async () =>
      (await call('tools/call', { name: 'slow_compute', arguments: { seconds: 1 } }))
        .taskId as string;
    const before = await Promise.all(Array.from({ length: 10 }, create));
    const failover = cluster.killMasterOf('{mcp-tasks}');
    // Creates keep coming while the replica is promoted: their wake-ups may fail to go out,
    // which the sweeper makes up for from Postgres.
    const during: string[] = [];
    while (during.length < 10) {
      during.push(await create());
      await sleep(100);
    }
    const { killed, promoted } = await failover;
    expect(promoted).not.toBe(killed);
    const after = await Promise.all(Array.from({ length: 10 }, create));
    const ended = await Promise.all(
      [...before, ...during, ...after].map((taskId) => pollUntil(taskId, terminal, 60_000)),
    );
    expect(ended.map((task) => task.status)).toEqual(Array(30).fill('completed'));
    const ready = await fetch(`${gatewayUrls[1]}/readyz`);
    expect(ready.status).toBe(200);
  }, 120_000);
});
