import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputKeyReusedError, newTaskId } from '@mcp-tasks/tasks';
import {
  alice,
  createStoreFixture,
  newTask,
  rawRow,
  type StoreFixture,
} from '../../test/helpers.js';
import type { Db } from '../db/database.js';
import { StaleLeaseError } from '../errors.js';
import { claimLease, releaseLease, renewLease, type Fence } from './lease.js';
import { databaseNow, findOrphans } from '../sweeper/sweeper-repository.js';
import {
  completeTask,
  failTask,
  markCancelled,
  recordAttemptFailure,
  requestInput,
  saveCheckpoint,
} from './fenced-task-writes.js';
import {
  CANCELLED_BY_REQUEST,
  createTask,
  getTask,
  recordInputResponses,
  requestCancel,
} from '../rows/task-repository.js';

let fixture: StoreFixture;
let db: Db;
beforeAll(async () => {
  fixture = await createStoreFixture('lease');
  db = fixture.db;
});
afterAll(() => fixture.close());

async function claimedTask(): Promise<Fence> {
  const { task } = await createTask(db, newTask());
  const claim = await claimLease(db, task.id, 'worker-1', 30_000);
  if (claim === null) throw new Error('fresh task not claimable');
  return claim.fence;
}

async function expireLease(taskId: string): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ lease_expires_at: new Date(Date.now() - 60_000) })
    .where('id', '=', taskId)
    .execute();
}

/** Every way a worker writes, each expected to lose against a superseded fence. */
const workerWrites: [string, (fence: Fence) => Promise<unknown>][] = [
  ['renewLease', (f) => renewLease(db, f, 30_000)],
  ['saveCheckpoint', (f) => saveCheckpoint(db, f, { step: 9 }, 'stale progress')],
  [
    'saveCheckpoint (renewing, with a tool version)',
    (f) =>
      saveCheckpoint(db, f, { step: 9 }, 'stale progress', { toolVersion: 3, leaseMs: 60_000 }),
  ],
  ['requestInput', (f) => requestInput(db, f, { [newTaskId()]: { m: 1 } }, null, 'stale ask')],
  ['completeTask', (f) => completeTask(db, f, { content: [] })],
  ['failTask', (f) => failTask(db, f, { code: -32000, message: 'stale' }, null)],
  ['markCancelled', (f) => markCancelled(db, f, 'stale cancel')],
  ['recordAttemptFailure', (f) => recordAttemptFailure(db, f, 'stale failure')],
];

describe('claimLease', () => {
  it('takes a fresh task, bumping epoch and attempts, with a database-clock expiry', async () => {
    const { task } = await createTask(db, newTask());
    const claim = await claimLease(db, task.id, 'worker-1', 30_000);
    expect(claim!.fence).toEqual({ taskId: task.id, epoch: 1 });
    expect(claim!.task).toMatchObject({
      status: 'working',
      leaseEpoch: 1,
      attempts: 1,
      failures: 0,
      lease: { owner: 'worker-1', epoch: 1 },
    });
    const remaining = claim!.task.lease!.expiresAt.getTime() - Date.now();
    expect(remaining).toBeGreaterThan(20_000);
    expect(remaining).toBeLessThanOrEqual(31_000);
  });

  it('refuses a task someone holds, and takes it over once that lease expired', async () => {
    const fence = await claimedTask();
    expect(await claimLease(db, fence.taskId, 'worker-2', 30_000)).toBeNull();
    await expireLease(fence.taskId);
    const takeover = await claimLease(db, fence.taskId, 'worker-2', 30_000);
    expect(takeover!.fence.epoch).toBe(fence.epoch + 1);
    // The first holder vanished mid-attempt: that counts against the retry budget.
    expect(takeover!.task).toMatchObject({
      attempts: 2,
      failures: 1,
      lease: { owner: 'worker-2' },
    });
  });

  it('does not count a resume after input as a failure', async () => {
    const fence = await claimedTask();
    const ask = { method: 'elicitation/create', params: { mode: 'form', message: 'ok?' } };
    await requestInput(db, fence, { ok: ask }, { step: 1 }, null);
    await recordInputResponses(db, alice, fence.taskId, { ok: { action: 'accept' } });
    const resumed = await claimLease(db, fence.taskId, 'worker-2', 30_000);
    expect(resumed!.task).toMatchObject({ attempts: 2, failures: 0 });
  });

  it('refuses missing, malformed, terminal and input_required tasks', async () => {
    expect(await claimLease(db, newTaskId(), 'w', 30_000)).toBeNull();
    expect(await claimLease(db, 'bad', 'w', 30_000)).toBeNull();
    const done = await claimedTask();
    await completeTask(db, done, { content: [] });
    expect(await claimLease(db, done.taskId, 'w', 30_000)).toBeNull();
    const parked = await claimedTask();
    await requestInput(db, parked, { k: { m: 1 } }, null, null);
    expect(await claimLease(db, parked.taskId, 'w', 30_000)).toBeNull();
  });

  it('rejects a non-positive lease length', async () => {
    const { task } = await createTask(db, newTask());
    await expect(claimLease(db, task.id, 'w', 0)).rejects.toBeInstanceOf(RangeError);
  });
});

describe('renewLease and releaseLease', () => {
  it('extends a held lease and reports a cancel request', async () => {
    const fence = await claimedTask();
    expect(await renewLease(db, fence, 60_000)).toEqual({ cancelRequested: false });
    const renewed = await getTask(db, fence.taskId);
    expect(renewed!.lease!.expiresAt.getTime() - Date.now()).toBeGreaterThan(50_000);
    await requestCancel(db, alice, fence.taskId);
    expect(await renewLease(db, fence, 60_000)).toEqual({ cancelRequested: true });
  });

  // A held task's frequent writes change no indexed column (migration 0022), so each is a HOT
  // update: no index entry written, the old version pruned without vacuum.
  it.each<[string, (trx: Db, fence: Fence) => Promise<unknown>]>([
    ['a renewal', (trx, fence) => renewLease(trx, fence, 60_000)],
    [
      'a checkpoint with a new message that renews the lease',
      (trx, fence) =>
        saveCheckpoint(trx, fence, { step: 1 }, 'Step 1 done', { toolVersion: 2, leaseMs: 60_000 }),
    ],
  ])('writes %s in place, a heap-only update', async (_name, write) => {
    const fence = await claimedTask();
    // This backend's unflushed counts, read around the write inside one transaction (nothing
    // is flushed before it ends), so their difference is the write alone.
    const counts = async (trx: Db) => {
      const { rows } = await sql<{ updated: string; hot: string }>`
        SELECT n_tup_upd AS updated, n_tup_hot_upd AS hot
        FROM pg_stat_xact_user_tables WHERE relname = 'tasks'`.execute(trx);
      return { updated: Number(rows[0]!.updated), hot: Number(rows[0]!.hot) };
    };
    const counted = await db.transaction().execute(async (trx) => {
      const before = await counts(trx);
      await write(trx, fence);
      const after = await counts(trx);
      return { updated: after.updated - before.updated, hot: after.hot - before.hot };
    });
    expect(counted).toEqual({ updated: 1, hot: 1 });
  });

  it('lets an expired holder nobody replaced renew (the epoch is the fence)', async () => {
    const fence = await claimedTask();
    await expireLease(fence.taskId);
    expect(await renewLease(db, fence, 30_000)).toEqual({ cancelRequested: false });
    expect(await claimLease(db, fence.taskId, 'worker-2', 30_000)).toBeNull();
  });

  it('gives the task back for another claim, and is a no-op once superseded', async () => {
    const fence = await claimedTask();
    await releaseLease(db, fence);
    expect((await getTask(db, fence.taskId))!.lease).toBeNull();
    const next = await claimLease(db, fence.taskId, 'worker-2', 30_000);
    expect(next!.fence.epoch).toBe(fence.epoch + 1);
    const before = await rawRow(db, fence.taskId);
    await releaseLease(db, fence);
    expect(await rawRow(db, fence.taskId)).toEqual(before);
  });

  it('cancels on release when a cancel was requested meanwhile', async () => {
    const fence = await claimedTask();
    await requestCancel(db, alice, fence.taskId);
    await releaseLease(db, fence);
    expect(await getTask(db, fence.taskId)).toMatchObject({
      status: 'cancelled',
      statusMessage: CANCELLED_BY_REQUEST,
      lease: null,
    });
  });
});

describe('worker writes', () => {
  it('saves a checkpoint and a status message', async () => {
    const fence = await claimedTask();
    await saveCheckpoint(db, fence, [1, 'two', { three: 3 }], 'step 2 of 3');
    expect(await getTask(db, fence.taskId)).toMatchObject({
      status: 'working',
      statusMessage: 'step 2 of 3',
      checkpoint: [1, 'two', { three: 3 }],
      lease: { owner: 'worker-1' },
    });
    await saveCheckpoint(db, fence, 'just a string', null);
    expect(await getTask(db, fence.taskId)).toMatchObject({
      checkpoint: 'just a string',
      statusMessage: null,
    });
  });

  it('bumps lastUpdatedAt only for what a client can see', async () => {
    const fence = await claimedTask();
    const before = await getTask(db, fence.taskId);
    await renewLease(db, fence, 30_000);
    await saveCheckpoint(db, fence, { step: 1 }, null);
    expect((await getTask(db, fence.taskId))!.lastUpdatedAt).toEqual(before!.lastUpdatedAt);
    await saveCheckpoint(db, fence, { step: 2 }, 'visible');
    expect((await getTask(db, fence.taskId))!.lastUpdatedAt.getTime()).toBeGreaterThan(
      before!.lastUpdatedAt.getTime(),
    );
  });

  it('renews the lease with a checkpoint when asked, and reports a cancel request', async () => {
    const fence = await claimedTask();
    const claimedUntil = (await rawRow(db, fence.taskId))!.lease_expires_at!.getTime();
    expect(await saveCheckpoint(db, fence, { step: 1 }, null, { leaseMs: 120_000 })).toEqual({
      cancelRequested: false,
    });
    const renewedUntil = (await rawRow(db, fence.taskId))!.lease_expires_at!.getTime();
    expect(renewedUntil - claimedUntil).toBeGreaterThan(60_000);
    await requestCancel(db, alice, fence.taskId);
    expect(await saveCheckpoint(db, fence, { step: 2 }, null)).toEqual({ cancelRequested: true });
    // Without leaseMs the expiry is left alone.
    expect((await rawRow(db, fence.taskId))!.lease_expires_at!.getTime()).toBe(renewedUntil);
    expect(await getTask(db, fence.taskId)).toMatchObject({
      status: 'working',
      checkpoint: { step: 2 },
    });
  });

  it('records the tool version with a checkpoint or an input round, and only when given', async () => {
    const fence = await claimedTask();
    await saveCheckpoint(db, fence, { step: 1 }, null);
    expect((await rawRow(db, fence.taskId))!.tool_version).toBeNull();
    await saveCheckpoint(db, fence, { step: 2 }, null, { toolVersion: 4 });
    expect((await rawRow(db, fence.taskId))!.tool_version).toBe(4);
    await requestInput(db, fence, { k: { m: 1 } }, { step: 3 }, null, { toolVersion: 5 });
    expect(await rawRow(db, fence.taskId)).toMatchObject({
      tool_version: 5,
      checkpoint: { step: 3 },
      status: 'input_required',
    });
  });

  it('parks the task in input_required, releasing the lease', async () => {
    const fence = await claimedTask();
    await requestInput(
      db,
      fence,
      { confirm: { method: 'elicitation/create' } },
      { at: 'confirm' },
      'confirm?',
    );
    expect(await getTask(db, fence.taskId)).toMatchObject({
      status: 'input_required',
      statusMessage: 'confirm?',
      inputRequests: { confirm: { method: 'elicitation/create' } },
      issuedInputKeys: ['confirm'],
      checkpoint: { at: 'confirm' },
      lease: null,
      leaseEpoch: 1,
    });
  });

  it('refuses a reused input key, answered or not, and changes nothing', async () => {
    const fence = await claimedTask();
    await requestInput(db, fence, { a: { m: 1 } }, null, null);
    await recordInputResponses(db, alice, fence.taskId, { a: { ok: true } });
    const second = (await claimLease(db, fence.taskId, 'worker-1', 30_000))!.fence;
    const before = await rawRow(db, fence.taskId);
    const error = await requestInput(db, second, { b: { m: 2 }, a: { m: 3 } }, null, null).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InputKeyReusedError);
    expect((error as InputKeyReusedError).keys).toEqual(['a']);
    expect(await rawRow(db, fence.taskId)).toEqual(before);
    await requestInput(db, second, { b: { m: 2 } }, null, null);
    expect((await getTask(db, fence.taskId))!.issuedInputKeys).toEqual(['a', 'b']);
  });

  it('refuses an empty input round', async () => {
    const fence = await claimedTask();
    await expect(requestInput(db, fence, {}, null, null)).rejects.toBeInstanceOf(RangeError);
  });

  it('cancels instead of parking when a cancel was requested while running', async () => {
    const fence = await claimedTask();
    await requestCancel(db, alice, fence.taskId);
    await requestInput(db, fence, { k: { m: 1 } }, null, 'ask');
    expect(await getTask(db, fence.taskId)).toMatchObject({
      status: 'cancelled',
      statusMessage: CANCELLED_BY_REQUEST,
      inputRequests: {},
      lease: null,
    });
  });

  it('keeps the last progress message on completion unless given a final one', async () => {
    const kept = await claimedTask();
    await saveCheckpoint(db, kept, { step: 6 }, 'Rendering section 6 of 6');
    await completeTask(db, kept, { content: [] });
    expect((await getTask(db, kept.taskId))?.statusMessage).toBe('Rendering section 6 of 6');
    const replaced = await claimedTask();
    await saveCheckpoint(db, replaced, { step: 6 }, 'Rendering section 6 of 6');
    await completeTask(db, replaced, { content: [] }, 'Report ready');
    expect((await getTask(db, replaced.taskId))?.statusMessage).toBe('Report ready');
  });

  it('completes, fails and cancels, each ending the lease', async () => {
    const a = await claimedTask();
    await completeTask(db, a, { content: [{ type: 'text', text: 'done' }] });
    expect(await getTask(db, a.taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'done' }] },
      error: null,
      lease: null,
    });
    const b = await claimedTask();
    await failTask(db, b, { code: -32000, message: 'boom', data: { why: 1 } }, 'failed');
    expect(await getTask(db, b.taskId)).toMatchObject({
      status: 'failed',
      statusMessage: 'failed',
      error: { code: -32000, message: 'boom', data: { why: 1 } },
      result: null,
      lease: null,
    });
    const c = await claimedTask();
    await markCancelled(db, c, 'stopped');
    expect(await getTask(db, c.taskId)).toMatchObject({
      status: 'cancelled',
      statusMessage: 'stopped',
      lease: null,
    });
  });

  it('records an attempt failure and lets a retry claim', async () => {
    const fence = await claimedTask();
    expect(await recordAttemptFailure(db, fence, 'ECONNRESET')).toEqual({ failures: 1 });
    expect((await rawRow(db, fence.taskId))!.last_attempt_error).toBe('ECONNRESET');
    const retry = (await claimLease(db, fence.taskId, 'worker-2', 30_000))!;
    expect(retry.task.failures).toBe(1);
    expect(await recordAttemptFailure(db, retry.fence, 'again')).toEqual({ failures: 2 });
  });

  it('marks the row enqueued with the failure, so no sweep wakes the retry before its backoff', async () => {
    const fence = await claimedTask();
    // Its last wake-up went out long ago: only the failure's own mark keeps the sweeper off.
    await db
      .updateTable('tasks')
      .set({ enqueued_at: new Date(Date.now() - 3_600_000) })
      .where('id', '=', fence.taskId)
      .execute();
    await recordAttemptFailure(db, fence, 'boom');
    const now = await databaseNow(db);
    const sweep = { wakeUpGraceMs: 5_000, limit: 1_000 };
    expect(await findOrphans(db, now, sweep)).not.toContain(fence.taskId);
    // Should its delayed wake-up be lost, the sweeper wakes it once the mark is a grace old.
    const later = new Date(now.getTime() + 6_000);
    expect(await findOrphans(db, later, sweep)).toContain(fence.taskId);
  });

  describe.each(workerWrites)('%s', (_name, write) => {
    it('loses against a newer claim and changes nothing', async () => {
      const stale = await claimedTask();
      await expireLease(stale.taskId);
      await claimLease(db, stale.taskId, 'worker-2', 30_000);
      const before = await rawRow(db, stale.taskId);
      await expect(write(stale)).rejects.toBeInstanceOf(StaleLeaseError);
      expect(await rawRow(db, stale.taskId)).toEqual(before);
    });

    it('loses on a terminal task and changes nothing', async () => {
      const fence = await claimedTask();
      await completeTask(db, fence, { content: [] });
      const before = await rawRow(db, fence.taskId);
      await expect(write(fence)).rejects.toBeInstanceOf(StaleLeaseError);
      expect(await rawRow(db, fence.taskId)).toEqual(before);
    });

    it('loses after the lease was released', async () => {
      const fence = await claimedTask();
      await releaseLease(db, fence);
      const before = await rawRow(db, fence.taskId);
      await expect(write(fence)).rejects.toBeInstanceOf(StaleLeaseError);
      expect(await rawRow(db, fence.taskId)).toEqual(before);
    });
  });
});
