import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alice,
  createStoreFixture,
  newTask,
  rawRow,
  type StoreFixture,
} from '../../test/helpers.js';
import type { Db } from '../db/database.js';
import { createOutbox, type WakeUpQueue } from './outbox.js';
import { findOrphans } from '../sweeper/sweeper-repository.js';
import { createTask } from '../rows/task-repository.js';

let fixture: StoreFixture;
let db: Db;
beforeAll(async () => {
  fixture = await createStoreFixture('outbox');
  db = fixture.db;
});
afterAll(() => fixture.close());

/** Not a fake queue: a recorder standing where the queue producer goes, optionally refusing. */
function recordingWakeUpQueue(fail = false) {
  const calls: unknown[][] = [];
  const wakeUpQueue: WakeUpQueue = {
    wake(...args) {
      calls.push(args);
      return fail ? Promise.reject(new Error('redis is down')) : Promise.resolve();
    },
  };
  return { calls, wakeUpQueue };
}

describe("wakeAgain (a worker's own wake-up)", () => {
  it('adds the delayed job, then marks the task enqueued so the sweeper leaves the backoff alone', async () => {
    const { calls, wakeUpQueue } = recordingWakeUpQueue();
    const { task } = await createTask(db, newTask({ owner: alice }));
    const outbox = createOutbox({ db, wakeUpQueue });
    await outbox.wakeAgain(task.id, 'retry', 5_000);
    expect(calls).toEqual([[task.id, 'retry', { delayMs: 5_000 }]]);
    expect((await rawRow(db, task.id))!.enqueued_at).not.toBeNull();
    const later = new Date(Date.now() + 10_000);
    expect(await findOrphans(db, later, { wakeUpGraceMs: 60_000, limit: 10_000 })).not.toContain(
      task.id,
    );
  });

  it('throws when the add fails, and marks nothing', async () => {
    const { wakeUpQueue } = recordingWakeUpQueue(true);
    const { task } = await createTask(db, newTask({ owner: alice }));
    const outbox = createOutbox({ db, wakeUpQueue });
    await expect(outbox.wakeAgain(task.id, 'released', 0)).rejects.toThrow('redis is down');
    expect((await rawRow(db, task.id))!.enqueued_at).toBeNull();
  });
});
