import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTaskId } from '@mcp-tasks/tasks';
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

/** A recorder with the batch door: each call's ids and reason, optionally refusing. */
function batchRecordingWakeUpQueue(fail = false) {
  const batches: { taskIds: string[]; reason: string }[] = [];
  const wakeUpQueue: WakeUpQueue = {
    wake: () => Promise.reject(new Error('a batch wake-up queue is not called one by one')),
    wakeBatch(taskIds, reason) {
      batches.push({ taskIds: [...taskIds], reason });
      return fail ? Promise.reject(new Error('redis is down')) : Promise.resolve();
    },
  };
  return { batches, wakeUpQueue };
}

describe('wakeAfterReply (the task service after a create or an answer)', () => {
  /** Each deferred wake-up's outcome, once `outbox.settle()` resolved. */
  const deferAll = async (
    outbox: ReturnType<typeof createOutbox>,
    taskIds: readonly string[],
    reason: 'created' | 'resumed',
  ): Promise<boolean[]> => {
    const sent: boolean[] = [];
    await Promise.all(
      taskIds.map((taskId, index) =>
        outbox.wakeAfterReply(taskId, reason, (ok) => (sent[index] = ok)),
      ),
    );
    await outbox.settle();
    return sent;
  };

  it('sends concurrent resumes as one call carrying their reason, each told it was sent', async () => {
    const { batches, wakeUpQueue } = batchRecordingWakeUpQueue();
    const outbox = createOutbox({ db, wakeUpQueue });
    const ids = Array.from({ length: 5 }, () => newTaskId());
    expect(await deferAll(outbox, ids, 'resumed')).toEqual(ids.map(() => true));
    expect(batches).toEqual([{ taskIds: ids, reason: 'resumed' }]);
  });

  it('sends a lone resume on its own, and never mixes creates and resumes in one call', async () => {
    const { batches, wakeUpQueue } = batchRecordingWakeUpQueue();
    const outbox = createOutbox({ db, wakeUpQueue });
    const lone = newTaskId();
    expect(await deferAll(outbox, [lone], 'resumed')).toEqual([true]);
    expect(batches).toEqual([{ taskIds: [lone], reason: 'resumed' }]);

    batches.splice(0);
    const [created, resumed] = [newTaskId(), newTaskId()];
    await Promise.all([
      outbox.wakeAfterReply(created, 'created'),
      outbox.wakeAfterReply(resumed, 'resumed'),
    ]);
    await outbox.settle();
    expect(batches).toEqual(
      expect.arrayContaining([
        { taskIds: [created], reason: 'created' },
        { taskIds: [resumed], reason: 'resumed' },
      ]),
    );
    expect(batches).toHaveLength(2);
  });

  it('reports every resume of a failed batch lost, each to onWakeUpError, and throws nothing', async () => {
    const { wakeUpQueue } = batchRecordingWakeUpQueue(true);
    const lost: string[] = [];
    const outbox = createOutbox({ db, wakeUpQueue, onWakeUpError: (taskId) => lost.push(taskId) });
    const ids = [newTaskId(), newTaskId(), newTaskId()];
    expect(await deferAll(outbox, ids, 'resumed')).toEqual([false, false, false]);
    expect(lost).toEqual(ids);
  });

  it('defers wakeAfterReply past the turn, and sends the creates and resumes of a turn in one call each', async () => {
    const { batches, wakeUpQueue } = batchRecordingWakeUpQueue();
    const outbox = createOutbox({ db, wakeUpQueue });
    const told: [string, boolean][] = [];
    const created = [newTaskId(), newTaskId()];
    const resumed = [newTaskId(), newTaskId(), newTaskId()];
    const deferred = [
      ...created.map((taskId) => outbox.wakeAfterReply(taskId, 'created')),
      ...resumed.map((taskId) =>
        outbox.wakeAfterReply(taskId, 'resumed', (sent) => told.push([taskId, sent])),
      ),
    ];
    await Promise.all(deferred);
    // Resolved, and nothing sent yet: the replies of this turn go first.
    expect(batches).toEqual([]);
    await outbox.settle();
    expect(batches).toEqual(
      expect.arrayContaining([
        { taskIds: created, reason: 'created' },
        { taskIds: resumed, reason: 'resumed' },
      ]),
    );
    expect(batches).toHaveLength(2);
    expect(told).toEqual(resumed.map((taskId) => [taskId, true]));
  });

  it('sends wake-ups deferred a few ms apart in one job when they linger, each in its own without', async () => {
    const spaced = async (outbox: ReturnType<typeof createOutbox>, ids: string[]) => {
      for (const taskId of ids) {
        await outbox.wakeAfterReply(taskId, 'created');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await outbox.settle();
    };
    const lingering = batchRecordingWakeUpQueue();
    const together = [newTaskId(), newTaskId(), newTaskId()];
    await spaced(
      createOutbox({ db, wakeUpQueue: lingering.wakeUpQueue, wakeUpLingerMs: 500 }),
      together,
    );
    expect(lingering.batches).toEqual([{ taskIds: together, reason: 'created' }]);

    const eager = batchRecordingWakeUpQueue();
    const apart = [newTaskId(), newTaskId()];
    await spaced(createOutbox({ db, wakeUpQueue: eager.wakeUpQueue }), apart);
    expect(eager.batches).toEqual(
      apart.map((taskId) => ({ taskIds: [taskId], reason: 'created' })),
    );
  });

  it('reports a deferred resume lost to onWakeUpError, and its reply never saw the failure', async () => {
    const { wakeUpQueue } = batchRecordingWakeUpQueue(true);
    const lost: string[] = [];
    const outbox = createOutbox({ db, wakeUpQueue, onWakeUpError: (taskId) => lost.push(taskId) });
    const taskId = newTaskId();
    await expect(outbox.wakeAfterReply(taskId, 'resumed')).resolves.toBeUndefined();
    expect(lost).toEqual([]);
    await outbox.settle();
    expect(lost).toEqual([taskId]);
  });

  it('wakes resumes one by one through a queue without the batch door', async () => {
    const { calls, wakeUpQueue } = recordingWakeUpQueue();
    const outbox = createOutbox({ db, wakeUpQueue });
    const ids = [newTaskId(), newTaskId()];
    expect(await deferAll(outbox, ids, 'resumed')).toEqual([true, true]);
    expect(calls).toEqual(ids.map((taskId) => [taskId, 'resumed']));
  });
});
