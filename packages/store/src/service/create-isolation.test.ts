import { startTcpProxy, type TcpProxy } from '@mcp-tasks/testing';
import type { JsonObject, JsonValue } from '@mcp-tasks/tasks';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createStoreFixture,
  newTask,
  rawRow,
  sleep,
  type StoreFixture,
} from '../../test/helpers.js';
import { createDb, type Db } from '../db/database.js';
import { ReplicaLagError, StoreUnavailableError } from '../errors.js';
import { findOrphans } from '../sweeper/sweeper-repository.js';
import {
  UnstorableArgumentsError,
  WITHDRAWN_MESSAGE,
  createTasks,
} from '../rows/task-repository.js';
import type { WakeUpQueue } from '../wake-up/outbox.js';
import { createTaskService } from './task-service.js';

/**
 * Issue 24, item 1: concurrent creates share one INSERT, so nothing one of them carries may fail
 * another, and no caller may be told "failed" about a task that will run.
 */
let fixture: StoreFixture;
/** The same database through a fault-injecting proxy, for a connection lost mid-statement. */
let proxy: TcpProxy;
let proxied: Db;
/** A second database, migrated and empty: a "replica" that never gets the row (lag forever). */
let lagging: StoreFixture;
const statements: string[] = [];
let counted: Db;

beforeAll(async () => {
  fixture = await createStoreFixture('create_isolation');
  lagging = await createStoreFixture('create_isolation_lag');
  proxy = await startTcpProxy({ target: fixture.database.connectionString });
  proxied = createDb({
    connectionString: proxy.urlFor(fixture.database.connectionString),
    max: 4,
    applicationName: 'create-isolation-proxied',
    connectionTimeoutMs: 1_000,
  });
  counted = createDb({
    connectionString: fixture.database.connectionString,
    max: 4,
    log: (event) => {
      if (event.level === 'query' || event.level === 'error') statements.push(event.query.sql);
    },
  });
});
afterEach(() => proxy.heal());
afterAll(async () => {
  await proxied.destroy();
  await counted.destroy();
  await proxy.close();
  await lagging.close();
  await fixture.close();
});

const noQueue: WakeUpQueue = { wake: () => Promise.resolve() };

/** Arguments whose one value is `depth` arrays deep. */
function nested(depth: number): JsonObject {
  let value: JsonValue = 1;
  for (let i = 0; i < depth; i += 1) value = [value];
  return { deep: value };
}

/** Holds a lock that blocks every INSERT into tasks until `release`. */
async function blockInserts(db: Db): Promise<{ release: () => Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holder = db.transaction().execute(async (trx) => {
    await sql`LOCK TABLE tasks IN SHARE MODE`.execute(trx);
    locked();
    await released;
  });
  await isLocked;
  return {
    release: async () => {
      release();
      await holder;
    },
  };
}

/** A plain session of the test's own, named so pg_stat_activity can tell it apart. */
async function sessionOn(connectionString: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString, application_name: 'create-isolation-locker' });
  await client.connect();
  return client;
}

/** Resolves once a statement from `applicationName` waits on a lock. */
async function waitForBlockedStatement(db: Db, applicationName: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE application_name = ${applicationName} AND wait_event_type = 'Lock'
    `.execute(db);
    if (rows[0]!.n > 0) return;
    await sleep(25);
  }
  throw new Error(`no statement of ${applicationName} is waiting on a lock`);
}

async function waitForRow(db: Db, taskId: string, status: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await rawRow(db, taskId);
    if (row?.status === status || Date.now() > deadline) return row;
    await sleep(25);
  }
}

describe('one create never fails another', () => {
  it('answers every create of a batch on its own when one cannot be serialised', async () => {
    const service = createTaskService({ db: fixture.db, wakeUpQueue: noQueue });
    const good = [newTask(), newTask()];
    const poisoned = newTask({
      operation: { method: 'tools/call', toolName: 'echo', arguments: nested(20_000) },
    });
    // Same turn: one batch.
    const outcomes = await Promise.allSettled([
      service.createAndWake(good[0]!),
      service.createAndWake(poisoned),
      service.createAndWake(good[1]!),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const refused = (outcomes[1] as PromiseRejectedResult).reason as Error;
    expect(refused).toBeInstanceOf(UnstorableArgumentsError);
    expect(refused.message).toBe(
      `task ${poisoned.id} arguments cannot be stored: nested too deep to serialise`,
    );
    expect(await rawRow(fixture.db, poisoned.id)).toBeUndefined();
    await service.settleWakeUps();
  });

  it('never compares a row it just inserted with its own input', async () => {
    // Serialisable, but deeper than a recursive comparison's stack: the create answers.
    const input = newTask({
      operation: { method: 'tools/call', toolName: 'echo', arguments: nested(3_900) },
    });
    const service = createTaskService({ db: fixture.db, wakeUpQueue: noQueue });
    const task = await service.createAndWake(input);
    expect(task).toMatchObject({ id: input.id, status: 'working' });
    await service.settleWakeUps();
  });

  it('refuses a lone surrogate for its own create only, in the one shared statement', async () => {
    const good = newTask();
    const high = newTask({
      operation: { method: 'tools/call', toolName: 'echo', arguments: { text: 'a\uD800b' } },
    });
    const low = newTask({
      operation: { method: 'tools/call', toolName: 'echo', arguments: { ['k\uDC00']: 1 } },
    });
    statements.length = 0;
    const outcomes = await createTasks(counted, [high, good, low]);
    expect(outcomes.map((o) => o.ok)).toEqual([false, true, false]);
    expect(outcomes.map((o) => (o.ok ? undefined : (o.error as Error).message))).toEqual([
      `task ${high.id} arguments cannot be stored: a lone UTF-16 surrogate (U+D800)`,
      undefined,
      `task ${low.id} arguments cannot be stored: a lone UTF-16 surrogate (U+DC00)`,
    ]);
    // One INSERT: the refused inputs never pushed the batch into single statements.
    expect(statements).toHaveLength(1);
  });

  it('withdraws the fresh tasks of a statement whose connection dropped before its answer', async () => {
    const service = createTaskService({
      db: proxied,
      wakeUpQueue: noQueue,
      visibilityTimeoutMs: 10_000,
    });
    const lock = await blockInserts(fixture.db);
    const input = newTask();
    const created = service.createAndWake(input);
    const outcome = created.then(
      () => undefined,
      (error: unknown) => error,
    );
    try {
      await waitForBlockedStatement(fixture.db, 'create-isolation-proxied');
      // The INSERT is running on the server; the client loses the connection. When the lock
      // frees the server commits it anyway: the create's fate was unknown to the gateway.
      proxy.cut();
      const error = await outcome;
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error).toMatchObject({ taskId: input.id, kept: false });
    } finally {
      await lock.release();
    }
    const row = await waitForRow(fixture.db, input.id, 'cancelled');
    expect(row).toMatchObject({ status: 'cancelled', status_message: WITHDRAWN_MESSAGE });
    expect(row!.cancel_requested_at).not.toBeNull();
    expect(
      await findOrphans(fixture.db, new Date(Date.now() + 3_600_000), {
        wakeUpGraceMs: 0,
        limit: 1_000,
      }),
    ).not.toContain(input.id);
    await service.settleWakeUps();
  });

  it('answers replica lag, not the failed withdraw, and withdraws once the database is back', async () => {
    const service = createTaskService({
      db: proxied,
      readDb: lagging.db,
      wakeUpQueue: noQueue,
      visibilityTimeoutMs: 1_500,
    });
    const input = newTask();
    const outcome = service.createAndWake(input).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(await waitForRow(fixture.db, input.id, 'working')).toBeDefined();
    // The primary goes away while the replica wait runs: the withdraw's first attempt fails.
    proxy.refuse();
    proxy.cut();
    const error = await outcome;
    expect(error).toBeInstanceOf(ReplicaLagError);
    expect((await rawRow(fixture.db, input.id))!.status).toBe('working');
    proxy.heal();
    const row = await waitForRow(fixture.db, input.id, 'cancelled');
    expect(row).toMatchObject({ status: 'cancelled', status_message: WITHDRAWN_MESSAGE });
    await service.settleWakeUps();
  });
  it('fails only the raced creates when the late re-read of their twins fails', async () => {
    // A statement timeout short enough for the test to make the re-read time out, and long
    // enough for the shared INSERT, which waits on the rival while the test queues the lock
    // (1 s timed that INSERT out on a loaded machine, before the rival committed).
    const impatient = createDb({
      connectionString: fixture.database.connectionString,
      max: 2,
      applicationName: 'create-isolation-reread',
      statementTimeoutMs: 3_000,
    });
    const twin = newTask();
    const fresh = newTask();
    const rival = await sessionOn(fixture.database.connectionString);
    const locker = await sessionOn(fixture.database.connectionString);
    try {
      // Another gateway's create of the same id, not committed yet: the shared INSERT waits on
      // it, then skips the id, and its snapshot cannot see the row, so the id is read again.
      await rival.query('BEGIN');
      await rival.query(
        `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments)
         VALUES ($1, $2, $3, 'tools/call', $4, $5)`,
        [
          twin.id,
          twin.owner.tenant,
          twin.owner.principal,
          twin.operation.toolName,
          JSON.stringify(twin.operation.arguments),
        ],
      );
      const outcomes = createTasks(impatient, [twin, fresh]);
      await waitForBlockedStatement(fixture.db, 'create-isolation-reread');
      // Queued behind the INSERT: once it ends, this lock holds off the re-read past its timeout.
      await locker.query('BEGIN');
      const locked = locker.query('LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE');
      await waitForBlockedStatement(fixture.db, 'create-isolation-locker');
      await rival.query('COMMIT');
      await locked;
      const [raced, created] = await outcomes;
      expect(raced).toMatchObject({ ok: false, error: { taskId: twin.id, kept: true } });
      expect((raced as { error: unknown }).error).toBeInstanceOf(StoreUnavailableError);
      expect(created).toMatchObject({ ok: true, value: { created: true, task: { id: fresh.id } } });
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await rival.query('ROLLBACK').catch(() => undefined);
      await Promise.all([rival.end(), locker.end(), impatient.destroy()]);
    }
  });
});
