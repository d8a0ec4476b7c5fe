import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alice,
  createStoreFixture,
  newTask,
  rawRow,
  type StoreFixture,
} from '../../test/helpers.js';
import type { Db } from '../db/database.js';
import { StaleLeaseError } from '../errors.js';
import { claimLease, type Fence } from './lease.js';
import { completeTask, requestInput, saveCheckpoint } from './fenced-task-writes.js';
import { expireTasks } from '../sweeper/sweeper-repository.js';
import {
  createTask,
  getTask,
  recordInputResponses,
  requestCancel,
} from '../rows/task-repository.js';

// Concurrency on real Postgres: every racer runs on its own pooled connection (pool max 20).
// Named "race" so `vitest run -t race` repeats just these.

let fixture: StoreFixture;
let db: Db;
beforeAll(async () => {
  fixture = await createStoreFixture('race');
  db = fixture.db;
});
afterAll(() => fixture.close());

async function settle<T>(promises: Promise<T>[]): Promise<{ won: T[]; lost: unknown[] }> {
  const results = await Promise.allSettled(promises);
  return {
    won: results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    lost: results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : [])),
  };
}

async function expireLease(taskId: string): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ lease_expires_at: new Date(Date.now() - 60_000) })
    .where('id', '=', taskId)
    .execute();
}

describe('race', () => {
  it.each([2, 3, 5, 10])('lets exactly one of %i racing workers claim a task', async (workers) => {
    const { task } = await createTask(db, newTask());
    const claims = await Promise.all(
      Array.from({ length: workers }, (_, i) => claimLease(db, task.id, `worker-${i}`, 30_000)),
    );
    const winners = claims.filter((claim) => claim !== null);
    expect(winners).toHaveLength(1);
    const stored = await getTask(db, task.id);
    expect(stored).toMatchObject({
      leaseEpoch: 1,
      attempts: 1,
      lease: { owner: winners[0]!.task.lease!.owner },
    });
  });

  it('lets exactly one of 10 workers take over an expired lease', async () => {
    const { task } = await createTask(db, newTask());
    await claimLease(db, task.id, 'dead-worker', 30_000);
    await expireLease(task.id);
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, i) => claimLease(db, task.id, `worker-${i}`, 30_000)),
    );
    expect(claims.filter((claim) => claim !== null)).toHaveLength(1);
    expect((await getTask(db, task.id))!.leaseEpoch).toBe(2);
  });

  it('keeps a superseded worker from completing or checkpointing while the new holder writes', async () => {
    const { task } = await createTask(db, newTask());
    const stale = (await claimLease(db, task.id, 'slow-worker', 30_000))!.fence;
    await expireLease(task.id);
    const current = (await claimLease(db, task.id, 'new-worker', 30_000))!.fence;
    const staleWrites = await settle<unknown>([
      completeTask(db, stale, { content: [{ type: 'text', text: 'stale' }] }),
      saveCheckpoint(db, stale, { stale: true }, 'stale'),
      completeTask(db, stale, { content: [] }),
    ]);
    const currentWrite = saveCheckpoint(db, current, { step: 1 }, 'fresh');
    await currentWrite;
    expect(staleWrites.won).toHaveLength(0);
    expect(staleWrites.lost.every((e) => e instanceof StaleLeaseError)).toBe(true);
    expect(await getTask(db, task.id)).toMatchObject({
      status: 'working',
      statusMessage: 'fresh',
      checkpoint: { step: 1 },
      lease: { owner: 'new-worker', epoch: current.epoch },
    });
    const before = await rawRow(db, task.id);
    await expect(completeTask(db, stale, { content: [] })).rejects.toBeInstanceOf(StaleLeaseError);
    expect(await rawRow(db, task.id)).toEqual(before);
  });

  it('records concurrent answers to every key and resumes exactly once', async () => {
    for (let round = 0; round < 10; round++) {
      const { task } = await createTask(db, newTask());
      const fence = (await claimLease(db, task.id, 'worker', 30_000))!.fence;
      const keys = ['a', 'b', 'c', 'd', 'e'];
      await requestInput(
        db,
        fence,
        Object.fromEntries(keys.map((k) => [k, { ask: k }])),
        null,
        null,
      );
      const outcomes = await Promise.all(
        keys.map((key) => recordInputResponses(db, alice, task.id, { [key]: { answer: key } })),
      );
      expect(outcomes.filter((o) => o.resumed)).toHaveLength(1);
      expect(outcomes.every((o) => o.found)).toBe(true);
      expect(await getTask(db, task.id)).toMatchObject({
        status: 'working',
        inputRequests: {},
        inputResponses: Object.fromEntries(keys.map((k) => [k, { answer: k }])),
      });
    }
  });

  it('resumes exactly once when the same answers arrive twice at once', async () => {
    const { task } = await createTask(db, newTask());
    const fence = (await claimLease(db, task.id, 'worker', 30_000))!.fence;
    await requestInput(db, fence, { a: { ask: 1 }, b: { ask: 2 } }, null, null);
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, () =>
        recordInputResponses(db, alice, task.id, { a: { n: 1 }, b: { n: 2 } }),
      ),
    );
    expect(outcomes.filter((o) => o.resumed)).toHaveLength(1);
  });

  it('ends a task racing cancel against complete in exactly one terminal state', async () => {
    for (let round = 0; round < 10; round++) {
      const { task } = await createTask(db, newTask());
      const fence = (await claimLease(db, task.id, 'worker', 30_000))!.fence;
      // An expired, unreplaced lease: the holder may still complete, the client may cancel directly.
      await expireLease(task.id);
      const [completion, cancel] = await Promise.allSettled([
        completeTask(db, fence, { content: [] }),
        requestCancel(db, alice, task.id),
      ]);
      expect(cancel.status).toBe('fulfilled');
      const cancelledDirectly = cancel.status === 'fulfilled' && cancel.value.cancelledDirectly;
      const stored = (await getTask(db, task.id))!;
      if (completion.status === 'fulfilled') {
        expect(cancelledDirectly).toBe(false);
        expect(stored.status).toBe('completed');
      } else {
        expect(completion.reason).toBeInstanceOf(StaleLeaseError);
        expect(cancelledDirectly).toBe(true);
        expect(stored.status).toBe('cancelled');
      }
      expect(stored.cancelRequestedAt).toBeInstanceOf(Date);
      const settled = await rawRow(db, task.id);
      await expect(completeTask(db, fence, { content: [] })).rejects.toBeInstanceOf(
        StaleLeaseError,
      );
      await requestCancel(db, alice, task.id);
      await expireTasks(db, new Date(Date.now() + 3_600_000));
      expect(await rawRow(db, task.id)).toEqual(settled);
    }
  });

  it('lets a claim and a cancel of an idle task race to one consistent outcome', async () => {
    for (let round = 0; round < 10; round++) {
      const { task } = await createTask(db, newTask());
      const [claim, cancel] = await Promise.all([
        claimLease(db, task.id, 'worker', 30_000),
        requestCancel(db, alice, task.id),
      ]);
      const stored = (await getTask(db, task.id))!;
      if (claim === null) {
        expect(cancel.cancelledDirectly).toBe(true);
        expect(stored.status).toBe('cancelled');
      } else {
        expect(cancel.cancelledDirectly).toBe(false);
        expect(stored).toMatchObject({ status: 'working', lease: { owner: 'worker' } });
        expect(stored.cancelRequestedAt).toBeInstanceOf(Date);
      }
    }
  });

  it('lets expiry racing completion settle the task once', async () => {
    for (let round = 0; round < 10; round++) {
      const { task } = await createTask(db, newTask({ ttlMs: 1 }));
      const fence: Fence = (await claimLease(db, task.id, 'worker', 30_000))!.fence;
      const [completion, expired] = await Promise.allSettled([
        completeTask(db, fence, { content: [] }),
        expireTasks(db, new Date(Date.now() + 1_000)),
      ]);
      const stored = (await getTask(db, task.id))!;
      const expiredIds = expired.status === 'fulfilled' ? expired.value : [];
      if (completion.status === 'fulfilled') {
        expect(expiredIds).not.toContain(task.id);
        expect(stored.status).toBe('completed');
      } else {
        expect(expiredIds).toContain(task.id);
        expect(stored).toMatchObject({
          status: 'failed',
          error: { code: -32603, message: 'task expired' },
        });
      }
    }
  });
});
