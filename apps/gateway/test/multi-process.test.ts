import { createTestDatabase, freePort, launchProcess } from '@mcp-tasks/testing';
import { createTaskQueue } from '@mcp-tasks/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createGatewayInfra,
  type GatewayInfra,
  type GatewayProcess,
} from './support/gateway-processes.js';
import { SMALL_REPORT, remote, rpc, rpcBody, rpcHeaders, sseReader } from './support/rpc.js';

/** Two real gateway processes on two ports sharing one Postgres and one Redis prefix. */
let infra: GatewayInfra;
let replicaA: GatewayProcess;
let replicaB: GatewayProcess;

beforeAll(async () => {
  infra = await createGatewayInfra('gw_multi');
  // B reads through DATABASE_READ_URL (the same primary here: the wait-for-visibility path runs
  // and passes at once, as it does for a read pool that is not a replica).
  [replicaA, replicaB] = await Promise.all([
    infra.startGateway(),
    infra.startGateway({ DATABASE_READ_URL: infra.database.connectionString }),
  ]);
}, 60_000);

afterAll(async () => {
  await infra?.close();
});

const createReport = (url: string) => rpc(remote(url), 'tools/call', SMALL_REPORT);

describe('two gateway replicas', () => {
  it('are ready when Postgres and Redis are reachable', async () => {
    const ready = await fetch(`${replicaA.url}/readyz`);
    expect(ready.status).toBe(200);
    const withReadPool = await fetch(`${replicaB.url}/readyz`);
    // No worker runs here: reported, and still ready (see worker-liveness.ts).
    expect(await withReadPool.json()).toEqual({
      status: 'ready',
      checks: { postgres: 'ok', postgres_read: 'ok', redis: 'ok' },
      workers: {
        status: 'none_recent',
        windowMs: 30_000,
        lastSeenMsAgo: null,
        hint: "no worker has consumed this gateway's queue within the window: workers must run with the same REDIS_PREFIX and REDIS_URL (the gateway log names them)",
      },
    });
  });

  it('resolve on replica B a task created on replica A, immediately', async () => {
    const created = await createReport(replicaA.url);
    expect(created.status).toBe(200);
    const taskId = created.result.taskId as string;
    const got = await rpc(remote(replicaB.url), 'tasks/get', { taskId });
    expect(got.status).toBe(200);
    expect(got.result).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
  });

  it('resolve all of 100 concurrent creates on the other replica at once', async () => {
    const created = await Promise.all(
      Array.from({ length: 100 }, () => createReport(replicaA.url)),
    );
    expect(created.map((reply) => reply.status)).toEqual(Array(100).fill(200));
    const ids = created.map((reply) => reply.result.taskId as string);
    expect(new Set(ids).size).toBe(100);
    const got = await Promise.all(
      ids.map((taskId) => rpc(remote(replicaB.url), 'tasks/get', { taskId })),
    );
    expect(got.map((reply) => reply.result.taskId)).toEqual(ids);
  });

  it('deliver a change made through replica A to a listener on replica B', async () => {
    const created = await createReport(replicaA.url);
    const taskId = created.result.taskId as string;
    const params = { notifications: { taskIds: [taskId] } };
    const response = await fetch(`${replicaB.url}/mcp`, {
      method: 'POST',
      headers: rpcHeaders('subscriptions/listen', params),
      body: JSON.stringify(rpcBody('subscriptions/listen', params, { id: 'x-replica' })),
    });
    const events = sseReader(response);
    expect((await events.next())?.data).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
    });
    expect((await events.next())?.data).toMatchObject({ params: { taskId, status: 'working' } });
    // Unleased and working, so the cancel lands at once and the change feed carries it.
    await rpc(remote(replicaA.url), 'tasks/cancel', { taskId });
    expect((await events.next())?.data).toMatchObject({ params: { taskId, status: 'cancelled' } });
    expect((await events.next())?.data).toMatchObject({
      id: 'x-replica',
      result: { resultType: 'complete' },
    });
  });

  it("hold a created task's wake-up after the reply for MCP_WAKE_UP_LINGER_MS, then send it", async () => {
    const lingering = await infra.startGateway({ MCP_WAKE_UP_LINGER_MS: '1000' });
    const queue = createTaskQueue({ redis: { url: infra.redis.url }, prefix: infra.redis.prefix });
    try {
      const created = await createReport(lingering.url);
      expect(created.status).toBe(200);
      const taskId = created.result.taskId as string;
      // Replied, and the wake-up still waits for others to share its job (1 ms by default).
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await queue.hasPendingJob(taskId)).toBe(false);
      await expect.poll(() => queue.hasPendingJob(taskId), { timeout: 5_000 }).toBe(true);
    } finally {
      await queue.close();
      await lingering.process.stop();
    }
  });

  it('end listen streams gracefully and exit 0 on SIGTERM', async () => {
    const replica = await infra.startGateway();
    const created = await createReport(replica.url);
    const taskId = created.result.taskId as string;
    const params = { notifications: { taskIds: [taskId] } };
    const response = await fetch(`${replica.url}/mcp`, {
      method: 'POST',
      headers: rpcHeaders('subscriptions/listen', params),
      body: JSON.stringify(rpcBody('subscriptions/listen', params, { id: 'bye' })),
    });
    const events = sseReader(response);
    await events.next();
    await events.next();
    const exit = replica.process.stop(15_000);
    expect((await events.next())?.data).toMatchObject({
      id: 'bye',
      result: { resultType: 'complete' },
    });
    await expect(exit).resolves.toBe(0);
  });

  it('on SIGTERM fail /readyz first while still serving requests, then exit 0', async () => {
    const replica = await infra.startGateway({ MCP_SHUTDOWN_DELAY_MS: '5000' });
    const exit = replica.process.stop(30_000);
    const deadline = Date.now() + 4_000;
    let readiness = 200;
    while (readiness !== 503 && Date.now() < deadline) {
      readiness = (await fetch(`${replica.url}/readyz`)).status;
      if (readiness !== 503) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(readiness).toBe(503);
    const served = await rpc(remote(replica.url), 'server/discover', {});
    expect(served.status).toBe(200);
    expect(served.result.resultType).toBe('complete');
    await expect(exit).resolves.toBe(0);
  }, 40_000);

  it('refuses to start on a database that is not migrated', async () => {
    const empty = await createTestDatabase('gw_unmigrated');
    try {
      const refused = await launchProcess({
        entry: 'apps/gateway/src/main.ts',
        env: {
          ...infra.env,
          DATABASE_URL: empty.connectionString,
          PORT: String(await freePort()),
        },
      });
      await expect(refused.exited).resolves.toBe(1);
      expect(refused.output()).toContain('database schema check failed');
    } finally {
      await empty.drop();
    }
  });

  it('exits non-zero listing every configuration problem', async () => {
    const bad = await launchProcess({
      entry: 'apps/gateway/src/main.ts',
      env: { DATABASE_URL: '', REDIS_URL: 'nope', MCP_AUTH: '', PORT: 'x', MCP_TOOL_PACKS: 'nope' },
    });
    await expect(bad.exited).resolves.toBe(1);
    const output = bad.output();
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'MCP_AUTH', 'PORT', 'MCP_TOOL_PACKS'])
      expect(output).toContain(`- ${name}`);
  });
});
