import {
  TASK_QUEUE_NAME,
  createConsumerHeartbeatReader,
  createTaskQueue,
  type ConsumerHeartbeatReader,
  type TaskQueue,
} from '@mcp-tasks/queue';
import {
  claimLease,
  createDb,
  createTaskService,
  getTask,
  requestCancel,
  requestInput,
  type Db,
} from '@mcp-tasks/store';
import { startTcpProxy, type TcpProxy } from '@mcp-tasks/testing';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchWorkerLiveness } from '../src/worker-liveness.js';
import {
  buildGateway,
  startInfrastructure,
  type GatewayUnderTest,
  type Infrastructure,
} from './support/harness.js';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  EMPTY_RESULT_REPLY,
  SMALL_REPORT,
  rpc,
  rpcBody,
  rpcHeaders,
  sseReader,
} from './support/rpc.js';

/**
 * /readyz while Postgres or Redis is unreachable: a TCP proxy sits between the gateway and each
 * shared server, and the proxy (never the server) goes down and comes back.
 */
let infra: Infrastructure;
let postgresProxy: TcpProxy;
let redisProxy: TcpProxy;
let db: Db;
let queue: TaskQueue;
let reader: ConsumerHeartbeatReader;
let gateway: GatewayUnderTest;

const NO_WORKERS = {
  status: 'none_recent',
  windowMs: 30_000,
  lastSeenMsAgo: null,
  hint: "no worker has consumed this gateway's queue within the window: workers must run with the same REDIS_PREFIX and REDIS_URL (the gateway log names them)",
};
const READY = {
  status: 200,
  body: { status: 'ready', checks: { postgres: 'ok', redis: 'ok' }, workers: NO_WORKERS },
};
/** Without Redis the worker heartbeats cannot be read either. */
const REDIS_UNREACHABLE = {
  status: 503,
  body: {
    status: 'not_ready',
    checks: { postgres: 'ok', redis: 'fail' },
    workers: { status: 'unknown' },
  },
};

async function readyz(): Promise<{ status: number; body: unknown }> {
  const response = await gateway.app.request('/readyz');
  return { status: response.status, body: await response.json() };
}

/** Polls /readyz until it is ready again (drivers reconnect with their own backoff). */
async function readyAgain(): Promise<{ status: number; body: unknown }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await readyz();
    if (answer.status === 200 || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  infra = await startInfrastructure('gw_readyz_outage');
  postgresProxy = await startTcpProxy({ target: infra.database.connectionString });
  redisProxy = await startTcpProxy({ target: infra.redis.url });
  db = createDb({ connectionString: postgresProxy.urlFor(infra.database.connectionString) });
  const redisUrl = redisProxy.urlFor(infra.redis.url);
  queue = createTaskQueue({ redis: { url: redisUrl }, prefix: infra.redis.prefix });
  reader = createConsumerHeartbeatReader({ redis: { url: redisUrl }, prefix: infra.redis.prefix });
  const logger = pino({ level: 'silent' });
  gateway = buildGateway(
    { ...infra, db, queue },
    {
      logger,
      workerLiveness: watchWorkerLiveness({
        reader,
        prefix: infra.redis.prefix,
        prefixIsDefault: false,
        queueName: TASK_QUEUE_NAME,
        redisSettingForLog: `REDIS_URL (${infra.redis.url})`,
        logger,
      }),
    },
  );
}, 60_000);

afterAll(async () => {
  reader?.close();
  await queue?.close();
  await db?.destroy();
  await Promise.allSettled([postgresProxy?.close(), redisProxy?.close()]);
  await infra?.close();
});

describe('/readyz during an outage', () => {
  it('is ready when both answer', async () => {
    expect(await readyAgain()).toEqual(READY);
  });

  it('fails naming redis while Redis is down, and is ready again once it is back', async () => {
    redisProxy.refuse();
    redisProxy.cut();
    expect(await readyz()).toEqual(REDIS_UNREACHABLE);
    redisProxy.heal();
    expect(await readyAgain()).toEqual(READY);
  }, 60_000);

  it('serves every method while Redis is down: Postgres is the record, wake-ups are left to the sweeper', async () => {
    redisProxy.refuse();
    redisProxy.cut();
    const created = await rpc(gateway.app, 'tools/call', SMALL_REPORT);
    expect(created.status).toBe(200);
    const taskId = created.result.taskId as string;
    const read = await rpc(gateway.app, 'tasks/get', { taskId });
    expect([read.status, read.result.status]).toEqual([200, 'working']);
    const cancelled = await rpc(gateway.app, 'tasks/cancel', { taskId });
    expect(cancelled.status).toBe(200);
    redisProxy.heal();
    expect(await readyAgain()).toEqual(READY);
  }, 60_000);

  it('answers a tasks/update that resumes its task while Redis is partitioned, before the wake-up gives up', async () => {
    const lost: string[] = [];
    const taskService = createTaskService({
      db,
      wakeUpQueue: queue,
      onWakeUpError: (taskId) => lost.push(taskId),
    });
    const answering = buildGateway({ ...infra, db, queue }, { taskService });
    const created = await rpc(answering.app, 'tools/call', SMALL_REPORT);
    const taskId = created.result.taskId as string;
    await taskService.settleWakeUps();
    const claim = await claimLease(db, taskId, 'test-worker', 30_000);
    const ask = {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: 'Go on?',
        requestedSchema: {
          type: 'object',
          properties: { approved: { type: 'boolean' } },
          required: ['approved'],
        },
      },
    };
    await requestInput(db, claim!.fence, { go: ask }, null, 'Go on?');
    redisProxy.blackhole();
    const answered = await rpc(answering.app, 'tasks/update', {
      taskId,
      inputResponses: { go: { action: 'accept', content: { approved: true } } },
    });
    // Acknowledged once the answer committed: its wake-up still waits on the partition (it
    // would have been reported lost before the reply if the reply had waited for it).
    expect(answered.body).toEqual(EMPTY_RESULT_REPLY);
    expect(lost).toEqual([]);
    await taskService.settleWakeUps();
    expect(lost).toEqual([taskId]);
    // The row is the record: working and unheld, what the sweeper wakes after its grace.
    expect(await getTask(db, taskId)).toMatchObject({ status: 'working', lease: null });
    redisProxy.cut();
    redisProxy.heal();
    expect(await readyAgain()).toEqual(READY);
  }, 60_000);

  it('fails naming postgres while Postgres is down, and is ready again once it is back', async () => {
    postgresProxy.refuse();
    postgresProxy.cut();
    expect(await readyz()).toEqual({
      status: 503,
      body: {
        status: 'not_ready',
        checks: { postgres: 'fail', redis: 'ok' },
        workers: NO_WORKERS,
      },
    });
    postgresProxy.heal();
    expect(await readyAgain()).toEqual(READY);
  }, 60_000);

  it('keeps a listen stream open while Postgres is unreachable, and pushes the change made meanwhile once it is back', async () => {
    const created = await rpc(gateway.app, 'tools/call', SMALL_REPORT);
    const taskId = created.result.taskId as string;
    const params = { notifications: { taskIds: [taskId] } };
    const response = await gateway.app.request('/mcp', {
      method: 'POST',
      headers: rpcHeaders('subscriptions/listen', params),
      body: JSON.stringify(rpcBody('subscriptions/listen', params, { id: 'sub-outage' })),
    });
    const events = sseReader(response);
    try {
      await events.next(); // the acknowledgement
      expect((await events.next())?.data).toMatchObject({ params: { taskId, status: 'working' } });

      // The gateway's pool loses Postgres; a change is committed meanwhile on another connection,
      // so its notification arrives while the stream cannot load the task.
      postgresProxy.refuse();
      postgresProxy.cut();
      await requestCancel(infra.db, { tenant: 'acme', principal: 'alice' }, taskId);
      await sleep(1_500);
      postgresProxy.heal();
      expect((await events.next(10_000))?.data).toMatchObject({
        method: 'notifications/tasks',
        params: { taskId, status: 'cancelled' },
      });
    } finally {
      postgresProxy.heal();
      await events.cancel();
    }
  }, 60_000);

  it('fails while Redis is partitioned (connected, but nothing answers), and is ready again after', async () => {
    redisProxy.blackhole();
    expect(await readyz()).toEqual(REDIS_UNREACHABLE);
    // The black hole lost the bytes sent into it, which TCP never does to a connection that
    // survives: a real partition ends with them delivered late or with the connections reset.
    redisProxy.cut();
    redisProxy.heal();
    expect(await readyAgain()).toEqual(READY);
  }, 60_000);
});
