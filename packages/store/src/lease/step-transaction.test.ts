import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreFixture, newTask, type StoreFixture } from '../../test/helpers.js';
import type { Db } from '../db/database.js';
import { StaleLeaseError } from '../errors.js';
import { saveCheckpoint } from './fenced-task-writes.js';
import { claimLease, type Fence } from './lease.js';
import {
  beginStepTransaction,
  commitStepTransaction,
  queryInStepTransaction,
  rollbackStepTransaction,
} from './step-transaction.js';
import { createTask } from '../rows/task-repository.js';

let fixture: StoreFixture;
let db: Db;
beforeAll(async () => {
  fixture = await createStoreFixture('step_transaction');
  db = fixture.db;
  await sql`CREATE TABLE effects (task_id text NOT NULL, note text NOT NULL)`.execute(db);
});
afterAll(() => fixture.close());

async function claimedTask(): Promise<Fence> {
  const { task } = await createTask(db, newTask());
  const claim = await claimLease(db, task.id, 'worker-a', 30_000);
  if (claim === null) throw new Error('fresh task not claimable');
  return claim.fence;
}

/** Another worker takes the task over, as after the first one's lease ran out. */
async function takeOver(fence: Fence): Promise<Fence> {
  await sql`UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = ${fence.taskId}`.execute(
    db,
  );
  const claim = await claimLease(db, fence.taskId, 'worker-b', 30_000);
  if (claim === null) throw new Error('expired lease not claimable');
  return claim.fence;
}

async function effectsOf(taskId: string): Promise<string[]> {
  const { rows } = await sql<{
    note: string;
  }>`SELECT note FROM effects WHERE task_id = ${taskId} ORDER BY note`.execute(db);
  return rows.map((row) => row.note);
}

async function stored(taskId: string) {
  return await db
    .selectFrom('tasks')
    .select(['checkpoint', 'steps_saved', 'lease_epoch'])
    .where('id', '=', taskId)
    .executeTakeFirstOrThrow();
}

/** Until a statement of this database waits on a row lock (the takeover, behind our UPDATE). */
async function waitForLockWaiter(): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    const { rows } = await sql<{ waiting: number }>`
      SELECT count(*)::int AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(db);
    if ((rows[0]?.waiting ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the takeover never waited on the row lock');
}

const insertEffect = 'INSERT INTO effects (task_id, note) VALUES ($1, $2)';

describe('a step transaction', () => {
  it('commits the tool’s writes with the checkpoint, and counts the step', async () => {
    const fence = await claimedTask();
    const trx = await beginStepTransaction(db, fence, { idleTimeoutMs: 5_000 });
    const inserted = await queryInStepTransaction(trx, insertEffect, [fence.taskId, 'step 0']);
    expect(inserted).toEqual({ rows: [], rowCount: 1 });
    await saveCheckpoint(trx, fence, { done: 1 }, 'one done');
    // Not visible to anyone else before the commit.
    expect(await effectsOf(fence.taskId)).toEqual([]);
    await commitStepTransaction(trx);
    expect(await effectsOf(fence.taskId)).toEqual(['step 0']);
    expect(await stored(fence.taskId)).toMatchObject({ checkpoint: { done: 1 }, steps_saved: 1 });
  });

  it('rolls back everything a superseded worker wrote: its checkpoint write finds another epoch', async () => {
    const fence = await claimedTask();
    const trx = await beginStepTransaction(db, fence, { idleTimeoutMs: 5_000 });
    await queryInStepTransaction(trx, insertEffect, [fence.taskId, 'stale']);
    const newer = await takeOver(fence);
    await expect(saveCheckpoint(trx, fence, { done: 1 }, null)).rejects.toBeInstanceOf(
      StaleLeaseError,
    );
    await rollbackStepTransaction(trx);
    expect(await effectsOf(fence.taskId)).toEqual([]);
    expect(await stored(fence.taskId)).toMatchObject({
      checkpoint: null,
      steps_saved: 0,
      lease_epoch: newer.epoch,
    });
  });

  it('renews the lease from the checkpoint’s own statement, not from when the transaction began', async () => {
    const fence = await claimedTask();
    const trx = await beginStepTransaction(db, fence, { idleTimeoutMs: 5_000 });
    const { rows } = await queryInStepTransaction<{ began: Date }>(trx, 'SELECT now() AS began');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await saveCheckpoint(trx, fence, { done: 1 }, null, { leaseMs: 1_000 });
    await commitStepTransaction(trx);
    const { lease_expires_at } = await db
      .selectFrom('tasks')
      .select('lease_expires_at')
      .where('id', '=', fence.taskId)
      .executeTakeFirstOrThrow();
    // The step's work took 200 ms after BEGIN: an expiry from BEGIN would end the lease that
    // much before the worker's local deadline.
    expect(lease_expires_at!.getTime()).toBeGreaterThanOrEqual(rows[0]!.began.getTime() + 1_200);
  });

  it('refuses to open for a fence that no longer holds', async () => {
    const fence = await claimedTask();
    await takeOver(fence);
    await expect(beginStepTransaction(db, fence, { idleTimeoutMs: 5_000 })).rejects.toBeInstanceOf(
      StaleLeaseError,
    );
  });

  it('makes a takeover that comes after the checkpoint write wait for the commit, then read that checkpoint', async () => {
    const fence = await claimedTask();
    await sql`UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = ${fence.taskId}`.execute(
      db,
    );
    // Expired but not yet claimed: the fence still holds.
    const trx = await beginStepTransaction(db, fence, { idleTimeoutMs: 5_000 });
    await queryInStepTransaction(trx, insertEffect, [fence.taskId, 'step 0']);
    await saveCheckpoint(trx, fence, { done: 1 }, null);
    const takeover = claimLease(db, fence.taskId, 'worker-b', 30_000);
    await waitForLockWaiter();
    await commitStepTransaction(trx);
    const claim = await takeover;
    expect(claim?.fence.epoch).toBe(fence.epoch + 1);
    expect(claim?.task.checkpoint).toEqual({ done: 1 });
    expect(claim?.stepsSaved).toBe(1);
    expect(await effectsOf(fence.taskId)).toEqual(['step 0']);
  });

  it('is ended by Postgres when left idle past its bound, so a worker that wakes later commits nothing', async () => {
    const fence = await claimedTask();
    const trx = await beginStepTransaction(db, fence, { idleTimeoutMs: 200 });
    await queryInStepTransaction(trx, insertEffect, [fence.taskId, 'frozen']);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const late = async () => {
      await saveCheckpoint(trx, fence, { done: 1 }, null);
      await commitStepTransaction(trx);
    };
    await expect(late()).rejects.toThrow();
    await rollbackStepTransaction(trx);
    expect(await effectsOf(fence.taskId)).toEqual([]);
    expect(await stored(fence.taskId)).toMatchObject({ checkpoint: null, steps_saved: 0 });
  });
});
