import { startTcpProxy } from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alice,
  createStoreFixture,
  newTask,
  rawRow,
  sleep,
  terminateConnections,
  type StoreFixture,
} from '../../test/helpers.js';
import {
  CHANGE_LISTENER_APPLICATION_NAME,
  TASK_LEASE_CHANGES_CHANNEL,
  createTaskChangeListener,
  type TaskChangeListener,
} from './change-listener.js';
import type { Db } from './database.js';
import { flagListenedTasks, flagListenedTasksOfOwners } from '../rows/listen-repository.js';
import { claimLease, renewLease } from '../lease/lease.js';
import { completeTask, requestInput, saveCheckpoint } from '../lease/fenced-task-writes.js';
import { markWakeUpSent } from '../wake-up/outbox.js';
import { expireTasks } from '../sweeper/sweeper-repository.js';
import { createTask, recordInputResponses, requestCancel } from '../rows/task-repository.js';

let fixture: StoreFixture;
let db: Db;
let listener: TaskChangeListener;
const seen: string[] = [];
const reconnects: number[] = [];

beforeAll(async () => {
  fixture = await createStoreFixture('change_listener');
  db = fixture.db;
  listener = await createTaskChangeListener({
    connectionString: fixture.database.connectionString,
    onReconnect: () => reconnects.push(Date.now()),
    reconnectDelayMs: { initial: 20, max: 200 },
  });
  listener.subscribe((taskId) => seen.push(taskId));
});
afterAll(async () => {
  await listener.close();
  await fixture.close();
});

async function eventually(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Notifications for one task, observed up to (and including) a final marker notification. */
async function notificationsFor(taskId: string, count: number): Promise<number> {
  await eventually(
    () => seen.filter((id) => id === taskId).length >= count,
    `${count} notifications`,
  );
  return seen.filter((id) => id === taskId).length;
}

/**
 * A notification that always comes (a cancel request is always announced, migration 0007): once
 * it arrived, everything committed before it through the same server has been delivered too.
 */
async function marker(): Promise<string> {
  const id = (await createTask(db, newTask())).task.id;
  await requestCancel(db, alice, id);
  await notificationsFor(id, 1);
  return id;
}

const countFor = (taskId: string) => seen.filter((id) => id === taskId).length;

describe('change notifications', () => {
  it('announce every client-visible change of a listened task, and nothing else', async () => {
    const { task } = await createTask(db, newTask());
    await flagListenedTasks(db, alice, [task.id]); // invisible
    const fence = (await claimLease(db, task.id, 'w', 30_000))!.fence; // lease: invisible
    await renewLease(db, fence, 30_000); // invisible
    await markWakeUpSent(db, [task.id]); // invisible
    await saveCheckpoint(db, fence, { step: 1 }, null); // same message: invisible
    await saveCheckpoint(db, fence, { step: 2 }, 'half way'); // visible
    expect(await notificationsFor(task.id, 1)).toBe(1);
    await requestInput(db, fence, { a: { m: 1 }, b: { m: 2 } }, null, 'need input');
    expect(await notificationsFor(task.id, 2)).toBe(2);
    await recordInputResponses(db, alice, task.id, { a: { ok: 1 } }); // pending set shrinks: visible
    expect(await notificationsFor(task.id, 3)).toBe(3);
    await recordInputResponses(db, alice, task.id, { b: { ok: 2 } }); // resume
    expect(await notificationsFor(task.id, 4)).toBe(4);
    const second = (await claimLease(db, task.id, 'w', 30_000))!.fence;
    await requestCancel(db, alice, task.id); // held: only the request
    expect(await notificationsFor(task.id, 5)).toBe(5);
    await completeTask(db, second, { content: [] }); // terminal
    expect(await notificationsFor(task.id, 6)).toBe(6);
    await marker();
    expect(countFor(task.id)).toBe(6);
  });

  it('announce nothing of a task no stream listens to, from create to completion', async () => {
    const { task } = await createTask(db, newTask());
    const fence = (await claimLease(db, task.id, 'w', 30_000))!.fence;
    await saveCheckpoint(db, fence, { step: 1 }, 'half way');
    await requestInput(db, fence, { a: { m: 1 } }, null, 'need input');
    await recordInputResponses(db, alice, task.id, { a: { ok: 1 } });
    const second = (await claimLease(db, task.id, 'w', 30_000))!.fence;
    await completeTask(db, second, { content: [] });
    await marker();
    expect(countFor(task.id)).toBe(0);
    expect((await rawRow(db, task.id))?.status).toBe('completed');
  });

  it('announce a cancel request whether or not anyone listens, held or not', async () => {
    const unheld = (await createTask(db, newTask())).task.id;
    const held = (await createTask(db, newTask())).task.id;
    await claimLease(db, held, 'w', 30_000);
    await requestCancel(db, alice, unheld); // cancelled at once
    await requestCancel(db, alice, held); // left to its worker, which must hear it now
    expect(await notificationsFor(unheld, 1)).toBe(1);
    expect(await notificationsFor(held, 1)).toBe(1);
  });

  it('announce the expiry of a held task (its worker must stop), and of an unheld one only when listened', async () => {
    const held = (await createTask(db, newTask({ ttlMs: 1 }))).task.id;
    const quiet = (await createTask(db, newTask({ ttlMs: 1 }))).task.id;
    const watched = (await createTask(db, newTask({ ttlMs: 1 }))).task.id;
    await claimLease(db, held, 'w', 30_000);
    await flagListenedTasks(db, alice, [watched]);
    await sleep(5);
    const expired = await expireTasks(db, new Date(Date.now() + 1_000));
    expect(expired).toEqual(expect.arrayContaining([held, quiet, watched]));
    expect(await notificationsFor(held, 1)).toBe(1);
    expect(await notificationsFor(watched, 1)).toBe(1);
    await marker();
    expect(countFor(quiet)).toBe(0);
  });

  it("tell a worker's listener only of a cancel request and an expiry under a lease, never of a listen stream's changes", async () => {
    const leaseListener = await createTaskChangeListener({
      connectionString: fixture.database.connectionString,
      channel: TASK_LEASE_CHANGES_CHANNEL,
    });
    const heard: string[] = [];
    leaseListener.subscribe((taskId) => heard.push(taskId));
    try {
      const watched = (await createTask(db, newTask())).task.id;
      await flagListenedTasks(db, alice, [watched]);
      const fence = (await claimLease(db, watched, 'w', 30_000))!.fence;
      await saveCheckpoint(db, fence, { step: 1 }, 'half way'); // visible: streams only
      await requestInput(db, fence, { a: { m: 1 } }, null, 'need input'); // visible: streams only
      await recordInputResponses(db, alice, watched, { a: { ok: 1 } }); // resume: streams only
      const second = (await claimLease(db, watched, 'w', 30_000))!.fence;
      await requestCancel(db, alice, watched); // held: its worker must hear it
      const expiring = (await createTask(db, newTask({ ttlMs: 1 }))).task.id;
      await claimLease(db, expiring, 'w', 30_000);
      await sleep(5);
      expect(await expireTasks(db, new Date(Date.now() + 1_000))).toContain(expiring);
      await completeTask(db, second, { content: [] }); // terminal: streams only
      // Everything above went on the general channel too, in commit order, the completion last.
      expect(await notificationsFor(watched, 5)).toBe(5);
      await eventually(() => heard.includes(expiring), 'the expiry on the lease channel');
      const last = await marker(); // its cancel is announced on both channels
      await eventually(() => heard.includes(last), 'the marker on the lease channel');
      expect(heard).toEqual([watched, expiring, last]);
      expect(countFor(expiring)).toBe(1);
    } finally {
      await leaseListener.close();
    }
  });

  it('stop announcing a listened task once its flag lapsed, until a stream renews it', async () => {
    const { task } = await createTask(db, newTask());
    const fence = (await claimLease(db, task.id, 'w', 30_000))!.fence;
    await flagListenedTasks(db, alice, [task.id], { ttlMs: 400 });
    await saveCheckpoint(db, fence, { step: 1 }, 'one'); // within the bound: announced
    expect(await notificationsFor(task.id, 1)).toBe(1);
    await sleep(600);
    await saveCheckpoint(db, fence, { step: 2 }, 'two'); // lapsed: not announced
    await marker();
    expect(countFor(task.id)).toBe(1);
    expect((await rawRow(db, task.id))?.listened_until?.getTime()).toBeLessThan(Date.now());
    await flagListenedTasks(db, alice, [task.id], { ttlMs: 60_000 }); // a stream listens again
    await saveCheckpoint(db, fence, { step: 3 }, 'three');
    expect(await notificationsFor(task.id, 2)).toBe(2);
  });

  it('renew a flag only once more than half its time is gone (a listen costs no write)', async () => {
    const { task } = await createTask(db, newTask());
    await flagListenedTasks(db, alice, [task.id], { ttlMs: 60_000 });
    const first = (await rawRow(db, task.id))!.listened_until!;
    await sleep(20);
    await flagListenedTasks(db, alice, [task.id], { ttlMs: 60_000 });
    expect((await rawRow(db, task.id))!.listened_until).toEqual(first);
    await flagListenedTasks(db, alice, [task.id], { ttlMs: 200_000 });
    expect((await rawRow(db, task.id))!.listened_until!.getTime()).toBeGreaterThan(first.getTime());
  });

  it("flag only the caller's own tasks that can still change", async () => {
    const own = (await createTask(db, newTask())).task.id;
    const foreign = (
      await createTask(db, newTask({ owner: { tenant: 'globex', principal: 'mallory' } }))
    ).task.id;
    const finished = (await createTask(db, newTask())).task.id;
    const fence = (await claimLease(db, finished, 'w', 30_000))!.fence;
    await completeTask(db, fence, { content: [] });
    await flagListenedTasks(db, alice, [own, foreign, finished, 'not a task id']);
    expect((await rawRow(db, own))?.listened).toBe(true);
    expect((await rawRow(db, foreign))?.listened).toBe(false);
    expect((await rawRow(db, finished))?.listened).toBe(false);
  });

  it("flag several owners' tasks in one statement, each only where its owner asked", async () => {
    const mallory = { tenant: 'globex', principal: 'mallory' };
    const mine = (await createTask(db, newTask())).task.id;
    const hers = (await createTask(db, newTask({ owner: mallory }))).task.id;
    const unasked = (await createTask(db, newTask({ owner: mallory }))).task.id;
    const flagged = await flagListenedTasksOfOwners(db, [
      { owner: alice, taskIds: [mine, unasked], ttlMs: 60_000 },
      { owner: mallory, taskIds: [hers], ttlMs: 60_000 },
      { owner: mallory, taskIds: [hers], ttlMs: 120_000 },
    ]);
    // Each request gets the tasks flagged for it, as the flag left them.
    expect(flagged.map((views) => views.map(({ id, status }) => ({ id, status })))).toEqual([
      [{ id: mine, status: 'working' }],
      [{ id: hers, status: 'working' }],
      [{ id: hers, status: 'working' }],
    ]);
    // Flagged already (with more than half its time left): not written, so not answered.
    expect(
      await flagListenedTasksOfOwners(db, [{ owner: alice, taskIds: [mine], ttlMs: 60_000 }]),
    ).toEqual([[]]);
    expect((await rawRow(db, mine))?.listened).toBe(true);
    expect((await rawRow(db, hers))?.listened).toBe(true);
    expect((await rawRow(db, unasked))?.listened).toBe(false);
    // Named twice: the longer lifetime wins.
    const left = (await rawRow(db, hers))!.listened_until!.getTime() - Date.now();
    expect(left).toBeGreaterThan(60_000);
  });

  it('do not announce a change that rolled back', async () => {
    const { task } = await createTask(db, newTask());
    await flagListenedTasks(db, alice, [task.id]);
    const fence = (await claimLease(db, task.id, 'w', 30_000))!.fence;
    await db
      .transaction()
      .execute(async (trx) => {
        await saveCheckpoint(trx, fence, { step: 1 }, 'never committed');
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await marker();
    expect(countFor(task.id)).toBe(0);
  });

  it('reach several subscribers, and stop after unsubscribe', async () => {
    const extra: string[] = [];
    const unsubscribe = listener.subscribe((id) => extra.push(id));
    const first = (await createTask(db, newTask())).task.id;
    await requestCancel(db, alice, first);
    await eventually(() => extra.includes(first), 'second subscriber');
    unsubscribe();
    const second = await marker();
    expect(extra).toEqual([first]);
    expect(countFor(second)).toBe(1);
  });

  it('reconnect after the connection drops, tell subscribers to resync, and keep delivering', async () => {
    const before = reconnects.length;
    expect(await terminateConnections(db, CHANGE_LISTENER_APPLICATION_NAME)).toBe(1);
    await eventually(() => reconnects.length > before, 'onReconnect');
    const id = await marker();
    expect(countFor(id)).toBe(1);
  });

  it('refuse to start against an unreachable database', async () => {
    await expect(
      createTaskChangeListener({ connectionString: 'postgres://postgres@127.0.0.1:1/none' }),
    ).rejects.toThrow();
  });

  it('gives up connecting to a server that never answers (a black hole) instead of hanging', async () => {
    const proxy = await startTcpProxy({ target: fixture.database.connectionString });
    proxy.blackhole();
    try {
      const attempt = createTaskChangeListener({
        connectionString: proxy.urlFor(fixture.database.connectionString),
      });
      const outcome = await Promise.race([
        attempt.then(
          async (listening) => {
            await listening.close();
            return 'connected';
          },
          (error: unknown) => (error instanceof Error ? error.message : String(error)),
        ),
        sleep(20_000).then(() => 'still waiting after 20 s'),
      ]);
      expect(outcome).toMatch(/timeout/i);
    } finally {
      await proxy.close();
    }
  }, 30_000);
});
