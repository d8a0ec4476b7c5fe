import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alice,
  backendsNamed,
  createStoreFixture,
  newTask,
  rawRow,
  terminateConnections,
  type StoreFixture,
} from '../../test/helpers.js';
import type { Db } from '../db/database.js';
import { StaleLeaseError } from '../errors.js';
import {
  LEADERSHIP_APPLICATION_NAME,
  createLeadershipSession,
  tryAcquireLeadership,
} from './leadership.js';
import { claimLease } from '../lease/lease.js';
import { completeTask, requestInput } from '../lease/fenced-task-writes.js';
import { markWakeUpSent } from '../wake-up/outbox.js';
import {
  deleteExpiredTaskBatch,
  deleteExpiredTasks,
  expireTaskBatch,
  expireTasks,
  findOrphans,
} from './sweeper-repository.js';
import {
  createTask,
  getTask,
  recordInputResponses,
  requestCancel,
} from '../rows/task-repository.js';

let fixture: StoreFixture;
let db: Db;
beforeAll(async () => {
  fixture = await createStoreFixture('sweeper');
  db = fixture.db;
});
afterAll(() => fixture.close());

const minute = 60_000;
const later = (ms: number) => new Date(Date.now() + ms);

describe('findOrphans and markEnqueued', () => {
  it('lists a never-enqueued working task once the grace passed, and not after markEnqueued', async () => {
    const { task } = await createTask(db, newTask());
    expect(await findOrphans(db, new Date(), { wakeUpGraceMs: minute, limit: 1000 })).not.toContain(
      task.id,
    );
    expect(
      await findOrphans(db, later(2 * minute), { wakeUpGraceMs: minute, limit: 1000 }),
    ).toContain(task.id);
    await markWakeUpSent(db, [task.id]);
    expect((await rawRow(db, task.id))!.enqueued_at).toBeInstanceOf(Date);
    expect(
      await findOrphans(db, later(30_000), { wakeUpGraceMs: minute, limit: 1000 }),
    ).not.toContain(task.id);
    // a wake-up that evidently got lost (still unclaimed long after) is listed again.
    expect(
      await findOrphans(db, later(2 * minute), { wakeUpGraceMs: minute, limit: 1000 }),
    ).toContain(task.id);
  });

  it('skips held, waiting and terminal tasks, and lists one whose lease expired', async () => {
    const held = (await createTask(db, newTask())).task.id;
    await claimLease(db, held, 'w', 10 * minute);
    const waiting = (await createTask(db, newTask())).task.id;
    const fence = (await claimLease(db, waiting, 'w', minute))!.fence;
    await requestInput(db, fence, { k: { m: 1 } }, null, null);
    const done = (await createTask(db, newTask())).task.id;
    await completeTask(db, (await claimLease(db, done, 'w', minute))!.fence, { content: [] });
    const dying = (await createTask(db, newTask())).task.id;
    await claimLease(db, dying, 'w', minute);

    const orphans = await findOrphans(db, later(5 * minute), { wakeUpGraceMs: 0, limit: 1000 });
    expect(orphans).toContain(dying);
    expect(orphans).not.toContain(held);
    expect(orphans).not.toContain(waiting);
    expect(orphans).not.toContain(done);
  });

  it('leaves tasks under an expired lease out when asked (right after an outage), not unheld ones', async () => {
    const dying = (await createTask(db, newTask())).task.id;
    await claimLease(db, dying, 'w', minute);
    const unheld = (await createTask(db, newTask())).task.id;

    const sweep = { wakeUpGraceMs: 0, limit: 1000 };
    const afterOutage = await findOrphans(db, later(5 * minute), {
      ...sweep,
      expiredLeases: false,
    });
    expect(afterOutage).toContain(unheld);
    expect(afterOutage).not.toContain(dying);
    expect(await findOrphans(db, later(5 * minute), sweep)).toContain(dying);
  });

  it('lists a resumed task (its enqueue mark cleared) after the grace, and honours the limit', async () => {
    const { task } = await createTask(db, newTask());
    const fence = (await claimLease(db, task.id, 'w', minute))!.fence;
    await markWakeUpSent(db, [task.id]);
    await requestInput(db, fence, { k: { m: 1 } }, null, null);
    await recordInputResponses(db, alice, task.id, { k: { ok: true } });
    expect((await rawRow(db, task.id))!.enqueued_at).toBeNull();
    expect(
      await findOrphans(db, later(2 * minute), { wakeUpGraceMs: minute, limit: 1000 }),
    ).toContain(task.id);
    expect(await findOrphans(db, later(2 * minute), { wakeUpGraceMs: 0, limit: 2 })).toHaveLength(
      2,
    );
  });

  it('leaves terminal tasks unmarked', async () => {
    const { task } = await createTask(db, newTask());
    await requestCancel(db, alice, task.id);
    await markWakeUpSent(db, [task.id]);
    expect((await rawRow(db, task.id))!.enqueued_at).toBeNull();
  });
});

describe('expireTasks and deleteExpiredTasks', () => {
  it('fails working and waiting tasks past their ttl, and leaves the rest alone', async () => {
    const working = (await createTask(db, newTask({ ttlMs: minute }))).task.id;
    const held = (await createTask(db, newTask({ ttlMs: minute }))).task.id;
    const heldFence = (await claimLease(db, held, 'w', 10 * minute))!.fence;
    const waiting = (await createTask(db, newTask({ ttlMs: minute }))).task.id;
    await requestInput(
      db,
      (await claimLease(db, waiting, 'w', minute))!.fence,
      { k: {} },
      null,
      null,
    );
    const young = (await createTask(db, newTask({ ttlMs: 10 * minute }))).task.id;
    const immortal = (await createTask(db, newTask({ ttlMs: null }))).task.id;
    const done = (await createTask(db, newTask({ ttlMs: minute }))).task.id;
    await completeTask(db, (await claimLease(db, done, 'w', minute))!.fence, { content: [] });
    const doneRow = await rawRow(db, done);

    const expired = await expireTasks(db, later(2 * minute));
    expect(expired).toEqual(expect.arrayContaining([working, held, waiting]));
    expect(expired).not.toContain(young);
    expect(expired).not.toContain(immortal);
    expect(expired).not.toContain(done);
    for (const id of [working, held, waiting]) {
      expect(await getTask(db, id)).toMatchObject({
        status: 'failed',
        statusMessage: 'task expired',
        error: { code: -32603, message: 'task expired' },
        inputRequests: {},
        lease: null,
      });
    }
    expect(await rawRow(db, done)).toEqual(doneRow);
    // The worker that held one finds out on its next write.
    await expect(completeTask(db, heldFence, { content: [] })).rejects.toBeInstanceOf(
      StaleLeaseError,
    );
    expect(await expireTasks(db, later(2 * minute))).not.toContain(working);
  });

  it('deletes terminal tasks only once expiry plus retention passed', async () => {
    const old = (await createTask(db, newTask({ ttlMs: minute }))).task.id;
    const active = (await createTask(db, newTask({ ttlMs: minute }))).task.id;
    const immortal = (await createTask(db, newTask({ ttlMs: null }))).task.id;
    await requestCancel(db, alice, old);
    await requestCancel(db, alice, immortal);

    expect(await deleteExpiredTasks(db, later(2 * minute), 10 * minute)).toBe(0);
    expect(await getTask(db, old)).toBeDefined();
    const deleted = await deleteExpiredTasks(db, later(20 * minute), 10 * minute);
    expect(deleted).toBeGreaterThanOrEqual(1);
    expect(await getTask(db, old)).toBeUndefined();
    expect(await getTask(db, active)).toBeDefined(); // not terminal: expireTasks first, then delete
    expect(await getTask(db, immortal)).toBeDefined();
  });

  it('goes on from where the last batch of a drain ended, oldest first, in both steps', async () => {
    // Whatever the tests before left due within ten minutes is out of the way first.
    await expireTasks(db, later(10 * minute), { limit: 100_000 });
    await deleteExpiredTasks(db, later(10 * minute), 0, { limit: 100_000 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await createTask(db, newTask({ ttlMs: 100 * minute }))).task.id);
    const [a, b, c] = ids as [string, string, string];
    const [expiryA, expiryB, expiryC] = await Promise.all(
      ids.map(async (id) => (await rawRow(db, id))!.expires_at!),
    );
    const now = later(200 * minute);

    const first = await expireTaskBatch(db, now, { limit: 2 });
    expect(first).toEqual({ ids: [a, b], count: 2, reached: expiryB });
    // A batch that starts past the last due row finds nothing, though `c` is due.
    const pastC = new Date(expiryC!.getTime() + 1);
    expect(await expireTaskBatch(db, now, { limit: 2, from: pastC })).toEqual({
      ids: [],
      count: 0,
      reached: undefined,
    });
    expect(await expireTaskBatch(db, now, { limit: 2, from: first.reached })).toEqual({
      ids: [c],
      count: 1,
      reached: expiryC,
    });

    const removed = await deleteExpiredTaskBatch(db, now, 0, { limit: 1 });
    expect(removed).toEqual({ count: 1, reached: expiryA });
    expect(await getTask(db, a)).toBeUndefined();
    expect(await deleteExpiredTaskBatch(db, now, 0, { limit: 5, from: pastC })).toEqual({
      count: 0,
      reached: undefined,
    });
    expect(await deleteExpiredTaskBatch(db, now, 0, { limit: 5, from: removed.reached })).toEqual({
      count: 2,
      reached: expiryC,
    });
    expect(await getTask(db, b)).toBeUndefined();
    expect(await getTask(db, c)).toBeUndefined();
  });
});

describe('tryAcquireLeadership', () => {
  it('elects one leader until it releases', async () => {
    const url = fixture.database.connectionString;
    const name = `sweeper-${fixture.database.name}`;
    const contenders = await Promise.all(
      Array.from({ length: 5 }, () => tryAcquireLeadership(url, name)),
    );
    const leaders = contenders.filter((c) => c !== null);
    expect(leaders).toHaveLength(1);
    expect(await tryAcquireLeadership(url, name)).toBeNull();
    const other = await tryAcquireLeadership(url, `${name}-other`);
    expect(other).not.toBeNull();
    await other!.release();
    await leaders[0]!.release();
    await leaders[0]!.release();
    const next = await tryAcquireLeadership(url, name);
    expect(next).not.toBeNull();
    await next!.release();
  });

  it('reports a lost connection, which frees the lock for another process', async () => {
    const url = fixture.database.connectionString;
    const name = `lost-${fixture.database.name}`;
    const leader = (await tryAcquireLeadership(url, name))!;
    expect(await terminateConnections(db, LEADERSHIP_APPLICATION_NAME)).toBe(1);
    await leader.lost;
    // The client hears of the end from the backend's FATAL message, sent before that backend
    // releases its session locks on its way out: the lock is free once the backend is gone.
    await expect
      .poll(() => backendsNamed(db, LEADERSHIP_APPLICATION_NAME), { timeout: 5_000, interval: 20 })
      .toBe(0);
    const next = await tryAcquireLeadership(url, name);
    expect(next).not.toBeNull();
    await next!.release();
    await leader.release();
  });
});

describe('createLeadershipSession with idleSessionTimeoutMs', () => {
  it('frees the lock of a leader gone silent mid-term, and tells that leader once it looks', async () => {
    const url = fixture.database.connectionString;
    const lockName = `silent-${fixture.database.name}`;
    const lost: unknown[] = [];
    // The silent leader: it takes the lock and then sends nothing, as a frozen or cut-off
    // process would (its term keeps this connection idle).
    const silent = createLeadershipSession({
      connectionString: url,
      lockName,
      idleSessionTimeoutMs: 500,
      onLost: (error) => lost.push(error),
    });
    const other = createLeadershipSession({ connectionString: url, lockName });
    try {
      expect(await silent.acquire()).toBe(true);
      expect(await other.acquire()).toBe(false);
      // Postgres ends the idle session after 500 ms, and the session lock goes with it.
      await expect.poll(() => other.acquire(), { timeout: 5_000, interval: 100 }).toBe(true);
      expect(silent.isLeader()).toBe(false);
      expect(lost).toHaveLength(1);
      expect(String(lost[0])).toMatch(/idle-session timeout/);
    } finally {
      await other.release();
      await Promise.all([silent.close(), other.close()]);
    }
  });

  it('keeps the lock of a leader that is not silent for longer than the bound', async () => {
    const url = fixture.database.connectionString;
    const lockName = `busy-${fixture.database.name}`;
    // The bound is well above a term: on a starved CI machine a 200 ms term with a 500 ms bound
    // once stayed idle past the bound (the event loop held back), and the lock went.
    const leader = createLeadershipSession({
      connectionString: url,
      lockName,
      idleSessionTimeoutMs: 1_500,
    });
    const other = createLeadershipSession({ connectionString: url, lockName });
    try {
      // Terms of 300 ms, back to back, for 2.4 s (longer than the bound): each acquire is a
      // query on the session, so it is never idle for long.
      for (let term = 0; term < 8; term += 1) {
        expect(await leader.acquire()).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await other.acquire()).toBe(false);
        await leader.release();
        await other.release();
      }
    } finally {
      await Promise.all([leader.close(), other.close()]);
    }
  });
});
