import { startTcpProxy } from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alice,
  createStoreFixture,
  newTask,
  sleep,
  terminateConnections,
  type StoreFixture,
} from '../test/helpers.js';
import {
  CHANGE_LISTENER_APPLICATION_NAME,
  createTaskChangeListener,
  type TaskChangeListener,
} from './change-listener.js';
import type { Db } from './database.js';
import { claimLease, completeTask, renewLease, requestInput, saveCheckpoint } from './lease.js';
import { expireTasks, markEnqueued } from './sweeper-repository.js';
import { createTask, recordInputResponses, requestCancel } from './task-repository.js';

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

describe('change notifications', () => {
  it('announce every client-visible transition, and nothing else', async () => {
    const { task } = await createTask(db, newTask());
    expect(await notificationsFor(task.id, 1)).toBe(1); // create
    const fence = (await claimLease(db, task.id, 'w', 30_000))!.fence; // lease: invisible
    await renewLease(db, fence, 30_000); // invisible
    await markEnqueued(db, task.id); // invisible
    await saveCheckpoint(db, fence, { step: 1 }, null); // same message: invisible
    await saveCheckpoint(db, fence, { step: 2 }, 'half way'); // visible
    expect(await notificationsFor(task.id, 2)).toBe(2);
    await requestInput(db, fence, { a: { m: 1 }, b: { m: 2 } }, null, 'need input');
    expect(await notificationsFor(task.id, 3)).toBe(3);
    await recordInputResponses(db, alice, task.id, { a: { ok: 1 } }); // pending set shrinks: visible
    expect(await notificationsFor(task.id, 4)).toBe(4);
    await recordInputResponses(db, alice, task.id, { b: { ok: 2 } }); // resume
    expect(await notificationsFor(task.id, 5)).toBe(5);
    const second = (await claimLease(db, task.id, 'w', 30_000))!.fence;
    await requestCancel(db, alice, task.id); // held: only the request
    expect(await notificationsFor(task.id, 6)).toBe(6);
    await completeTask(db, second, { content: [] }); // terminal
    expect(await notificationsFor(task.id, 7)).toBe(7);
    // A marker through the same connection: everything before it has been delivered by now.
    const marker = (await createTask(db, newTask())).task.id;
    await notificationsFor(marker, 1);
    expect(seen.filter((id) => id === task.id)).toHaveLength(7);
  });

  it('announce a direct cancel and an expiry', async () => {
    const cancelled = (await createTask(db, newTask())).task.id;
    const expired = (await createTask(db, newTask({ ttlMs: 1 }))).task.id;
    await requestCancel(db, alice, cancelled);
    await expireTasks(db, new Date(Date.now() + 1_000));
    expect(await notificationsFor(cancelled, 2)).toBe(2);
    expect(await notificationsFor(expired, 2)).toBe(2);
  });

  it('do not announce a change that rolled back', async () => {
    const { task } = await createTask(db, newTask());
    await notificationsFor(task.id, 1);
    const fence = (await claimLease(db, task.id, 'w', 30_000))!.fence;
    await db
      .transaction()
      .execute(async (trx) => {
        await saveCheckpoint(trx, fence, { step: 1 }, 'never committed');
        throw new Error('roll back');
      })
      .catch(() => undefined);
    const marker = (await createTask(db, newTask())).task.id;
    await notificationsFor(marker, 1);
    expect(seen.filter((id) => id === task.id)).toHaveLength(1);
  });

  it('reach several subscribers, and stop after unsubscribe', async () => {
    const extra: string[] = [];
    const unsubscribe = listener.subscribe((id) => extra.push(id));
    const first = (await createTask(db, newTask())).task.id;
    await eventually(() => extra.includes(first), 'second subscriber');
    unsubscribe();
    const second = (await createTask(db, newTask())).task.id;
    await notificationsFor(second, 1);
    expect(extra).toEqual([first]);
  });

  it('reconnect after the connection drops, tell subscribers to resync, and keep delivering', async () => {
    const before = reconnects.length;
    expect(await terminateConnections(db, CHANGE_LISTENER_APPLICATION_NAME)).toBe(1);
    await eventually(() => reconnects.length > before, 'onReconnect');
    const { task } = await createTask(db, newTask());
    expect(await notificationsFor(task.id, 1)).toBe(1);
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
