import { createDb, createTaskService, type Db } from '@mcp-tasks/store';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGateway, startInfrastructure, type Infrastructure } from './support/harness.js';
import { SMALL_REPORT, createReportTask, rpc, type RpcReply } from './support/rpc.js';

/**
 * Issue 24, item 2: in a database brownout (here a real one: another session holds a lock on the
 * tasks table) creates and polls must not pile up without bound, nor commit after their client
 * gave up on them.
 */
let infra: Infrastructure;
beforeAll(async () => {
  infra = await startInfrastructure('gw_create_overload');
});
afterAll(async () => {
  await infra.close();
});

type LockMode = 'SHARE' | 'ACCESS EXCLUSIVE';

/** A plain session of the test's own, beside the gateway's pool. */
async function session(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: infra.database.connectionString });
  await client.connect();
  return client;
}

/** Another session holds `mode` on tasks (SHARE blocks INSERTs; ACCESS EXCLUSIVE every read). */
async function lockTasks(mode: LockMode): Promise<{ release: () => Promise<void> }> {
  const holder = await session();
  await holder.query('BEGIN');
  await holder.query(`LOCK TABLE tasks IN ${mode} MODE`);
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      await holder.query('COMMIT');
      await holder.end();
    },
  };
}

/** Resolves once `count` statements of the gateway's pool wait on the lock. */
async function waitForBlocked(applicationName: string, count = 1): Promise<void> {
  const admin = await session();
  try {
    for (let i = 0; i < 400; i += 1) {
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE application_name = $1 AND wait_event_type = 'Lock'`,
        [applicationName],
      );
      if (rows[0]!.n >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    await admin.end();
  }
  throw new Error(`no statement of ${applicationName} is waiting on the lock`);
}

async function countTasks(): Promise<number> {
  const admin = await session();
  try {
    const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM tasks');
    return rows[0]!.n;
  } finally {
    await admin.end();
  }
}

/** A gateway whose store goes through its own pool, named so the test can see it wait. */
function gatewayWith(
  name: string,
  options: { maxWaitingCreates?: number; maxCreateWaitMs?: number; requestTimeoutMs?: number },
  log?: (sql: string) => void,
) {
  const db: Db = createDb({
    connectionString: infra.database.connectionString,
    max: 4,
    applicationName: name,
    ...(log === undefined
      ? {}
      : {
          log: (event) => {
            if (event.level === 'query') log(event.query.sql);
          },
        }),
  });
  const taskService = createTaskService({
    db,
    wakeUpQueue: infra.queue,
    maxWaitingCreates: options.maxWaitingCreates,
    maxCreateWaitMs: options.maxCreateWaitMs,
  });
  const gateway = buildGateway(infra, {
    taskService,
    config: { requestTimeoutMs: options.requestTimeoutMs ?? 30_000 },
  });
  return { ...gateway, close: () => db.destroy() };
}

const create = (gw: ReturnType<typeof gatewayWith>, signal?: AbortSignal): Promise<RpcReply> =>
  rpc(
    { request: (path, init) => gw.app.request(path, { ...init, signal }) },
    'tools/call',
    SMALL_REPORT,
  );

function expectOverloaded(reply: RpcReply, message: string, limit: string, value: number) {
  expect(reply.status).toBe(503);
  expect(reply.headers.get('retry-after')).toBe('1');
  expect(reply.error).toEqual({
    code: -32603,
    message,
    data: { reason: 'overloaded', retryAfterMs: 1000, limit, value },
  });
}

interface Brownout {
  gw: ReturnType<typeof gatewayWith>;
  /** A create sent before the others, now waiting on the lock in its INSERT. */
  inFlight: Promise<RpcReply>;
  /** Tasks in the table before. */
  before: number;
  /** Ends the brownout (idempotent). */
  release: () => Promise<void>;
}

/** Runs `body` while another session blocks every INSERT, one create already stuck in it. */
async function duringBrownout(
  name: string,
  options: Parameters<typeof gatewayWith>[1],
  body: (brownout: Brownout) => Promise<void>,
): Promise<void> {
  const gw = gatewayWith(name, options);
  const before = await countTasks();
  const lock = await lockTasks('SHARE');
  try {
    const inFlight = create(gw);
    await waitForBlocked(name);
    await body({ gw, inFlight, before, release: lock.release });
  } finally {
    await lock.release();
    await gw.close();
  }
}

describe('creates in a database brownout', () => {
  it('refuses at once a create beyond MCP_CREATE_QUEUE_MAX waiting ones, and commits none of it', () =>
    duringBrownout(
      'overload-length',
      { maxWaitingCreates: 2 },
      async ({ gw, inFlight, before, release }) => {
        const waiting = [create(gw), create(gw)];
        await new Promise((resolve) => setImmediate(resolve));
        expectOverloaded(
          await create(gw),
          'Server overloaded: 2 creates are already waiting for the database (MCP_CREATE_QUEUE_MAX); nothing was started. Retry after the Retry-After delay.',
          'MCP_CREATE_QUEUE_MAX',
          2,
        );
        await release();
        const answered = await Promise.all([inFlight, ...waiting]);
        expect(answered.map((reply) => reply.status)).toEqual([200, 200, 200]);
        expect(await countTasks()).toBe(before + 3);
      },
    ));

  it('refuses, unsent, a create that waited MCP_CREATE_QUEUE_MAX_AGE_MS for its INSERT', () =>
    duringBrownout(
      'overload-age',
      { maxCreateWaitMs: 300 },
      async ({ gw, inFlight, before, release }) => {
        expectOverloaded(
          await create(gw),
          'Server overloaded: the create waited 300 ms for the database (MCP_CREATE_QUEUE_MAX_AGE_MS); nothing was started. Retry after the Retry-After delay.',
          'MCP_CREATE_QUEUE_MAX_AGE_MS',
          300,
        );
        await release();
        expect((await inFlight).status).toBe(200);
        expect(await countTasks()).toBe(before + 1);
      },
    ));

  it('keeps the request deadline while a create waits: its 504 drops it unsent', () =>
    duringBrownout(
      'overload-deadline',
      { requestTimeoutMs: 500 },
      async ({ gw, inFlight, before, release }) => {
        const timedOut = await create(gw);
        expect(timedOut.status).toBe(504);
        expect(timedOut.error).toEqual({ code: -32603, message: 'Request timed out after 500 ms' });
        await release();
        // Taken into its INSERT before the deadline: disarmed, so it gets its handle.
        expect((await inFlight).status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(await countTasks()).toBe(before + 1);
      },
    ));

  it('drops, unsent, a create whose client went away while it waited', () =>
    duringBrownout('overload-abort', {}, async ({ gw, inFlight, before, release }) => {
      const client = new AbortController();
      const abandoned = create(gw, client.signal);
      await new Promise((resolve) => setTimeout(resolve, 100));
      client.abort();
      await release();
      expect((await inFlight).status).toBe(200);
      // Answered as soon as its batch came (nobody reads it), long before the queue's age bound.
      await abandoned;
      expect(await countTasks()).toBe(before + 1);
    }));
});

describe('polls in a database brownout', () => {
  it('sends no read for a poll that waited past its 504', async () => {
    const statements: string[] = [];
    const gw = gatewayWith('poll-deadline', { requestTimeoutMs: 500 }, (text) =>
      statements.push(text),
    );
    const taskId = await createReportTask(gw.app);
    const lock = await lockTasks('ACCESS EXCLUSIVE');
    try {
      statements.length = 0;
      const first = rpc(gw.app, 'tasks/get', { taskId });
      await waitForBlocked('poll-deadline');
      const second = rpc(gw.app, 'tasks/get', { taskId });
      expect((await first).status).toBe(504);
      expect((await second).status).toBe(504);
      await lock.release();
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The first read was already on the wire; the second never left the batcher.
      expect(statements).toHaveLength(1);
    } finally {
      await lock.release();
      await gw.close();
    }
  });
});
