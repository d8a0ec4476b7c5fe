import { createDb, migrateToLatest, type Db } from '@mcp-tasks/store';
import {
  createTestRedis,
  freePort,
  launchProcess,
  makePostgresDir,
  privatePostgresUnavailableReason,
  startPostgresServer,
  type LaunchedProcess,
  type PostgresServer,
  type TestRedis,
} from '@mcp-tasks/testing';
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_TOKENS, SMALL_REPORT, accept, remote, rpc, type RpcReply } from './support/rpc.js';

/**
 * Issue 33, item 1: a real gateway process on a Postgres of its own, which is stopped and started
 * again, before and under requests. Every answer while it is away is a 503 with Retry-After and
 * `data.reason: "store_unavailable"` — never a 500 "Internal error" — and /readyz fails until the
 * server is back, then recovers by itself.
 */
const unavailable = privatePostgresUnavailableReason();
if (unavailable !== null) console.warn(`store outage tests skipped: ${unavailable}`);

const STORE_UNAVAILABLE = {
  status: 503,
  retryAfter: '1',
  code: -32603,
  reason: 'store_unavailable',
  retryAfterMs: 1000,
};

/** What a reply looks like when it refuses for the store's sake (or anything else, to compare). */
function refusal(reply: RpcReply) {
  const error = (reply.body as { error?: { code?: number; data?: Record<string, unknown> } })
    ?.error;
  return {
    status: reply.status,
    retryAfter: reply.headers.get('retry-after'),
    code: error?.code,
    reason: error?.data?.reason,
    retryAfterMs: error?.data?.retryAfterMs,
  };
}

describe.skipIf(unavailable !== null)('the gateway while its Postgres is down', () => {
  let dir: string;
  let server: PostgresServer;
  let db: Db;
  let redis: TestRedis;
  let gateway: LaunchedProcess;
  let url: string;

  beforeAll(async () => {
    dir = await makePostgresDir('gw-store-outage-');
    server = await startPostgresServer({ dir, name: 'primary' });
    db = createDb({ connectionString: server.url(), max: 2 });
    await migrateToLatest(db);
    redis = await createTestRedis('gw_store_outage');
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    gateway = await launchProcess({
      entry: 'apps/gateway/src/main.ts',
      env: {
        DATABASE_URL: server.url(),
        REDIS_URL: redis.url,
        REDIS_PREFIX: redis.prefix,
        MCP_AUTH: 'tokens',
        MCP_TOKENS,
        REQUEST_STATE_SECRET: 'store-outage-request-state-secret-0123456789',
        PORT: String(port),
        HOST: '127.0.0.1',
      },
      readyUrl: `${url}/readyz`,
      readyTimeoutMs: 60_000,
    });
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await db?.destroy();
    await redis?.deleteKeys();
    await server?.destroy();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  const createReport = () => rpc(remote(url), 'tools/call', SMALL_REPORT);
  /** Tasks that will run or ran: a withdrawn create's tombstone is cancelled, so it is left out. */
  const countLiveTasks = async () =>
    Number(
      (
        await db
          .selectFrom('tasks')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('status', '!=', 'cancelled')
          .executeTakeFirstOrThrow()
      ).n,
    );
  /** Polls until the gateway answers a create again (drivers reconnect on their own). */
  async function createsAgain(): Promise<RpcReply> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const reply = await createReport();
      if (reply.status === 200 || Date.now() > deadline) return reply;
      await sleep(200);
    }
  }

  it('answers every method 503 + Retry-After while the server is stopped, and leaves no create that runs', async () => {
    const before = await createReport();
    const taskId = before.result.taskId as string;
    const tasksBefore = await countLiveTasks();
    await db.destroy();

    await server.stop('fast');
    const answers = {
      create: await createReport(),
      get: await rpc(remote(url), 'tasks/get', { taskId }),
      update: await rpc(remote(url), 'tasks/update', {
        taskId,
        inputResponses: { approval: accept({ approve: true }) },
      }),
      cancel: await rpc(remote(url), 'tasks/cancel', { taskId }),
      listen: await rpc(remote(url), 'subscriptions/listen', {
        notifications: { taskIds: [taskId] },
      }),
    };
    for (const [method, reply] of Object.entries(answers)) {
      expect({ method, ...refusal(reply) }).toEqual({ method, ...STORE_UNAVAILABLE });
      expect(reply.error.message).toMatch(
        /^task store unavailable \((cannot connect to the database|the database connection was lost|the database is restarting or shutting down)\); (retry in 1 s|nothing will run: retry the call)$/,
      );
    }
    const readyz = await fetch(`${url}/readyz`);
    expect(readyz.status).toBe(503);
    expect(((await readyz.json()) as { checks: unknown }).checks).toEqual({
      postgres: 'fail',
      redis: 'ok',
    });

    await server.start();
    expect((await createsAgain()).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    db = createDb({ connectionString: server.url(), max: 2 });
    // The refused create left nothing that runs: only the one before and the one after the
    // outage exist (a create whose fate the store could not know is withdrawn: a cancelled row).
    expect(await countLiveTasks()).toBe(tasksBefore + 1);
  }, 120_000);

  it('answers 200 or 503 + Retry-After, never 500, while the server crashes and restarts under load', async () => {
    const created = await createReport();
    const taskId = created.result.taskId as string;
    const replies: RpcReply[] = [];
    let running = true;
    const client = async (n: number) => {
      while (running) {
        replies.push(
          n % 2 === 0 ? await createReport() : await rpc(remote(url), 'tasks/get', { taskId }),
        );
        await sleep(20);
      }
    };
    const clients = Array.from({ length: 6 }, (_, n) => client(n));
    await sleep(500);
    await server.stop('immediate');
    await sleep(1_500);
    await server.start();
    await sleep(500);
    await server.stop('fast');
    await sleep(1_500);
    await server.start();
    expect((await createsAgain()).status).toBe(200);
    running = false;
    await Promise.all(clients);

    const byStatus = new Map<number, number>();
    for (const reply of replies) byStatus.set(reply.status, (byStatus.get(reply.status) ?? 0) + 1);
    const refused = replies.filter((reply) => reply.status !== 200);
    // The outages were felt, and each refusal was a retry-later, with nothing else mixed in.
    expect(refused.length).toBeGreaterThan(0);
    expect(byStatus.get(500)).toBeUndefined();
    for (const reply of refused) expect(refusal(reply)).toEqual(STORE_UNAVAILABLE);
  }, 120_000);
});
