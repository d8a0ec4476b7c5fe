import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputKeyReusedError, newTaskId } from '@mcp-tasks/tasks';
import { createStoreFixture, newTask, rawRow, type StoreFixture } from '../../test/helpers.js';
import { createBatchedLeaseWrites, type BatchedLeaseWrites } from './batched-lease-writes.js';
import { createDb, type Db } from '../db/database.js';
import { StaleLeaseError } from '../errors.js';
import type { FinalWrite } from './fenced-task-writes.js';
import { claimLease, type Fence } from './lease.js';
import { createTask } from '../rows/task-repository.js';

let fixture: StoreFixture;
let db: Db;
/** The same database through a query log, to count the statements each batch costs. */
let loggedDb: Db;
let statements: string[] = [];
beforeAll(async () => {
  fixture = await createStoreFixture('batched_lease');
  db = fixture.db;
  loggedDb = createDb({
    connectionString: fixture.database.connectionString,
    // Failed statements too ('error' events).
    log: (event) => {
      statements.push(event.query.sql);
    },
  });
});
afterAll(async () => {
  await loggedDb.destroy();
  await fixture.close();
});

const writes = (): BatchedLeaseWrites =>
  createBatchedLeaseWrites({ db: loggedDb, workerId: 'worker-b', leaseMs: 30_000 });

async function freshTasks(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push((await createTask(db, newTask())).task.id);
  return ids;
}

async function claimed(count: number): Promise<Fence[]> {
  const fences: Fence[] = [];
  for (const id of await freshTasks(count)) {
    const claim = await claimLease(db, id, 'worker-b', 30_000);
    fences.push(claim!.fence);
  }
  return fences;
}

/** Three claimed tasks, a cancel requested on the third while its worker holds it. */
async function claimedThirdCancelled(): Promise<Fence[]> {
  const fences = await claimed(3);
  await db
    .updateTable('tasks')
    .set({ cancel_requested_at: new Date() })
    .where('id', '=', fences[2]!.taskId)
    .execute();
  return fences;
}

/** Another worker takes the task over: its lease is made to look expired, then claimed anew. */
async function takenOver(fence: Fence): Promise<void> {
  await db
    .updateTable('tasks')
    .set({ lease_expires_at: new Date(Date.now() - 60_000) })
    .where('id', '=', fence.taskId)
    .execute();
  await claimLease(db, fence.taskId, 'worker-other', 30_000);
}

/**
 * Two writes of one kind meet in one statement; the second task was taken over by another worker
 * first: the kept one is written, the superseded one rejects with StaleLeaseError, its row as it was.
 */
async function staleFenceLosesAlone<T>(kind: {
  write: (shared: BatchedLeaseWrites, fence: Fence) => Promise<T>;
  keptValue: T;
  keptWritten: (taskId: string) => Promise<void>;
}): Promise<void> {
  const [kept, superseded] = await claimed(2);
  await takenOver(superseded!);
  const before = await rawRow(db, superseded!.taskId);
  const shared = writes();
  statements = [];
  const outcomes = await Promise.allSettled([
    kind.write(shared, kept!),
    kind.write(shared, superseded!),
  ]);
  expect(statements).toHaveLength(1);
  expect(outcomes[0]).toEqual({ status: 'fulfilled', value: kind.keptValue });
  expect(outcomes[1]).toEqual({
    status: 'rejected',
    reason: new StaleLeaseError(superseded!.taskId, superseded!.epoch),
  });
  await kind.keptWritten(kept!.taskId);
  expect(await rawRow(db, superseded!.taskId)).toEqual(before);
}

describe('batched claims', () => {
  it('claims that arrive together share one statement, each caller getting its own claim', async () => {
    const ids = await freshTasks(3);
    statements = [];
    const claims = await Promise.all(ids.map((id) => writes().claim(id)));
    // Three batchers, three statements: the batch is per worker, not global.
    expect(statements).toHaveLength(3);

    const shared = writes();
    const more = await freshTasks(4);
    statements = [];
    const batch = await Promise.all(more.map((id) => shared.claim(id)));
    expect(statements).toHaveLength(1);
    expect(statements[0]).toContain('ANY(');
    expect(batch.map((claim) => claim?.fence)).toEqual(
      more.map((taskId) => ({ taskId, epoch: 1 })),
    );
    for (const [index, claim] of batch.entries()) {
      expect(claim!.task).toMatchObject({
        id: more[index],
        status: 'working',
        attempts: 1,
        lease: { owner: 'worker-b', epoch: 1 },
      });
    }
    expect(claims.every((claim) => claim !== null)).toBe(true);
  });

  it('a lone claim goes out at once, alone in its statement', async () => {
    const [id] = await freshTasks(1);
    statements = [];
    const claim = await writes().claim(id!);
    expect(claim?.fence).toEqual({ taskId: id, epoch: 1 });
    expect(statements).toHaveLength(1);
  });

  it('answers null for a held task, a malformed id and a second delivery of the same wake-up when nothing else waits', async () => {
    const [free, held] = await freshTasks(2);
    await claimLease(db, held!, 'worker-other', 30_000);
    const shared = writes();
    statements = [];
    const answers = await Promise.all([
      shared.claim(free!),
      shared.claim(held!),
      shared.claim('not-a-task-id'),
      shared.claim(free!),
    ]);
    expect(statements).toHaveLength(1);
    expect(answers.map((claim) => claim?.fence ?? null)).toEqual([
      { taskId: free, epoch: 1 },
      null,
      null,
      null,
    ]);
    expect((await rawRow(db, held!))?.lease_owner).toBe('worker-other');
  });
});

describe('batched last writes', () => {
  it('completions, failures and cancels that arrive together share one statement', async () => {
    const fences = await claimed(3);
    const finals: FinalWrite[] = [
      {
        status: 'completed',
        result: { content: [{ type: 'text', text: 'ok' }] },
        statusMessage: 'Done.',
      },
      { status: 'failed', error: { code: -32603, message: 'boom' }, statusMessage: 'Failed: boom' },
      { status: 'cancelled', statusMessage: 'Stopped by the tool.' },
    ];
    const shared = writes();
    statements = [];
    await Promise.all(fences.map((fence, index) => shared.writeFinal(fence, finals[index]!)));
    expect(statements).toHaveLength(1);

    const rows = await Promise.all(fences.map((fence) => rawRow(db, fence.taskId)));
    expect(
      rows.map((row) => ({
        status: row!.status,
        result: row!.result,
        error: row!.error,
        statusMessage: row!.status_message,
        leaseOwner: row!.lease_owner,
        leaseExpiresAt: row!.lease_expires_at,
        epoch: row!.lease_epoch,
      })),
    ).toEqual([
      {
        status: 'completed',
        result: { content: [{ type: 'text', text: 'ok' }] },
        error: null,
        statusMessage: 'Done.',
        leaseOwner: null,
        leaseExpiresAt: null,
        epoch: 1,
      },
      {
        status: 'failed',
        result: null,
        error: { code: -32603, message: 'boom' },
        statusMessage: 'Failed: boom',
        leaseOwner: null,
        leaseExpiresAt: null,
        epoch: 1,
      },
      {
        status: 'cancelled',
        result: null,
        error: null,
        statusMessage: 'Stopped by the tool.',
        leaseOwner: null,
        leaseExpiresAt: null,
        epoch: 1,
      },
    ]);
  });

  it('a fence that no longer holds loses alone, with StaleLeaseError, and its row is unchanged', () =>
    staleFenceLosesAlone({
      write: (shared, fence) =>
        shared.writeFinal(fence, { status: 'cancelled', statusMessage: 'bye' }),
      keptValue: undefined,
      keptWritten: async (taskId) => expect((await rawRow(db, taskId))?.status).toBe('cancelled'),
    }));

  it('a row the database refuses fails only its own write: the batch goes again one by one', async () => {
    const [good, bad] = await claimed(2);
    const shared = writes();
    statements = [];
    const outcomes = await Promise.allSettled([
      shared.writeFinal(good!, {
        status: 'completed',
        result: { content: [] },
        statusMessage: null,
      }),
      // A result that is not an object breaks the tasks_result_iff_completed check.
      shared.writeFinal(bad!, {
        status: 'completed',
        result: ['not', 'an', 'object'] as unknown as { content: [] },
        statusMessage: null,
      }),
    ]);
    // The batch, then each write on its own.
    expect(statements).toHaveLength(3);
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: undefined });
    expect(outcomes[1]).toMatchObject({
      status: 'rejected',
      reason: { code: '23514', constraint: 'tasks_result_iff_completed' },
    });
    expect((await rawRow(db, good!.taskId))?.status).toBe('completed');
    expect(await rawRow(db, bad!.taskId)).toMatchObject({
      status: 'working',
      lease_owner: 'worker-b',
    });
  });

  it('a lone write goes out at once as its single-row statement', async () => {
    const [fence] = await claimed(1);
    statements = [];
    await writes().writeFinal(fence!, { status: 'cancelled', statusMessage: null });
    expect(statements).toHaveLength(1);
    expect(statements[0]).not.toContain('unnest');
    expect((await rawRow(db, fence!.taskId))?.status).toBe('cancelled');
  });
});

describe('batched checkpoints', () => {
  it('checkpoints that arrive together share one statement: each row saved, renewed, counted', async () => {
    const fences = await claimedThirdCancelled();
    const before = await Promise.all(fences.map((fence) => rawRow(db, fence.taskId)));
    const shared = writes();
    statements = [];
    const answers = await Promise.all([
      shared.saveCheckpoint(fences[0]!, { done: 1 }, 'Step 1 done', { toolVersion: 2 }),
      shared.saveCheckpoint(fences[1]!, null, null, {}),
      shared.saveCheckpoint(fences[2]!, ['a', 1], 'third', { toolVersion: 3 }),
    ]);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toContain('unnest');
    expect(answers).toEqual([
      { cancelRequested: false },
      { cancelRequested: false },
      { cancelRequested: true },
    ]);
    const rows = await Promise.all(fences.map((fence) => rawRow(db, fence.taskId)));
    expect(
      rows.map((row) => ({
        status: row!.status,
        checkpoint: row!.checkpoint,
        statusMessage: row!.status_message,
        stepsSaved: row!.steps_saved,
        toolVersion: row!.tool_version,
        leaseOwner: row!.lease_owner,
        epoch: row!.lease_epoch,
      })),
    ).toEqual([
      {
        status: 'working',
        checkpoint: { done: 1 },
        statusMessage: 'Step 1 done',
        stepsSaved: 1,
        toolVersion: 2,
        leaseOwner: 'worker-b',
        epoch: 1,
      },
      {
        status: 'working',
        checkpoint: null,
        statusMessage: null,
        stepsSaved: 1,
        toolVersion: before[1]!.tool_version,
        leaseOwner: 'worker-b',
        epoch: 1,
      },
      {
        status: 'working',
        checkpoint: ['a', 1],
        statusMessage: 'third',
        stepsSaved: 1,
        toolVersion: 3,
        leaseOwner: 'worker-b',
        epoch: 1,
      },
    ]);
    // Each checkpoint renewed its lease from the statement's start, for the worker's lease.
    for (const [index, row] of rows.entries()) {
      const renewedFor = row!.lease_expires_at!.getTime() - Date.now();
      expect(renewedFor).toBeGreaterThan(25_000);
      expect(renewedFor).toBeLessThanOrEqual(30_000);
      expect(row!.lease_expires_at!.getTime()).toBeGreaterThan(
        before[index]!.lease_expires_at!.getTime(),
      );
    }
  });

  it('a fence that no longer holds loses alone, with StaleLeaseError, and its row is unchanged', () =>
    staleFenceLosesAlone({
      write: (shared, fence) => shared.saveCheckpoint(fence, { n: 1 }, 'one', {}),
      keptValue: { cancelRequested: false },
      keptWritten: async (taskId) =>
        expect((await rawRow(db, taskId))?.checkpoint).toEqual({ n: 1 }),
    }));

  it('a lone checkpoint goes out at once as its single-row statement', async () => {
    const [fence] = await claimed(1);
    statements = [];
    expect(await writes().saveCheckpoint(fence!, { n: 2 }, 'two', { toolVersion: 1 })).toEqual({
      cancelRequested: false,
    });
    expect(statements).toHaveLength(1);
    expect(statements[0]).not.toContain('unnest');
    expect(await rawRow(db, fence!.taskId)).toMatchObject({
      checkpoint: { n: 2 },
      status_message: 'two',
      steps_saved: 1,
    });
  });
});

describe('batched input pauses', () => {
  const ask = (message: string) => ({
    method: 'elicitation/create' as const,
    params: { message, requestedSchema: { type: 'object' as const, properties: {} } },
  });

  it('pauses that arrive together share one statement: each parked with its own round, unheld', async () => {
    const fences = await claimedThirdCancelled();
    const shared = writes();
    statements = [];
    await Promise.all([
      shared.requestInput(fences[0]!, { approve: ask('Go on?') }, { done: 1 }, 'Waiting', {
        toolVersion: 2,
      }),
      shared.requestInput(fences[1]!, { b: ask('B?'), a: ask('A?') }, null, null, {}),
      shared.requestInput(fences[2]!, { approve: ask('Go on?') }, { done: 1 }, 'Waiting', {}),
    ]);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toContain('unnest');
    const rows = await Promise.all(fences.map((fence) => rawRow(db, fence.taskId)));
    expect(
      rows.map((row) => ({
        status: row!.status,
        inputRequests: row!.input_requests,
        issued: row!.issued_input_keys,
        checkpoint: row!.checkpoint,
        statusMessage: row!.status_message,
        stepsSaved: row!.steps_saved,
        toolVersion: row!.tool_version,
        leaseOwner: row!.lease_owner,
        leaseExpiresAt: row!.lease_expires_at,
        enqueuedAt: row!.enqueued_at,
        epoch: row!.lease_epoch,
      })),
    ).toEqual([
      {
        status: 'input_required',
        inputRequests: { approve: ask('Go on?') },
        issued: ['approve'],
        checkpoint: { done: 1 },
        statusMessage: 'Waiting',
        stepsSaved: 1,
        toolVersion: 2,
        leaseOwner: null,
        leaseExpiresAt: null,
        enqueuedAt: null,
        epoch: 1,
      },
      {
        status: 'input_required',
        inputRequests: { b: ask('B?'), a: ask('A?') },
        issued: ['b', 'a'],
        checkpoint: null,
        statusMessage: null,
        stepsSaved: 1,
        toolVersion: rows[1]!.tool_version,
        leaseOwner: null,
        leaseExpiresAt: null,
        enqueuedAt: null,
        epoch: 1,
      },
      {
        // A cancel requested while the worker ran: cancelled instead of parked.
        status: 'cancelled',
        inputRequests: {},
        issued: ['approve'],
        checkpoint: { done: 1 },
        statusMessage: 'cancelled by request',
        stepsSaved: 1,
        toolVersion: rows[2]!.tool_version,
        leaseOwner: null,
        leaseExpiresAt: null,
        enqueuedAt: null,
        epoch: 1,
      },
    ]);
  });

  it('a reused key and a fence that no longer holds each lose alone, with their own error', async () => {
    const [kept, reused, superseded] = await claimed(3);
    await db
      .updateTable('tasks')
      .set({ issued_input_keys: ['approve'] })
      .where('id', '=', reused!.taskId)
      .execute();
    await takenOver(superseded!);
    const before = await Promise.all([reused, superseded].map((f) => rawRow(db, f!.taskId)));

    const shared = writes();
    const outcomes = await Promise.allSettled(
      [kept, reused, superseded].map((fence) =>
        shared.requestInput(fence!, { approve: ask('Go on?') }, { done: 1 }, 'Waiting', {}),
      ),
    );
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: undefined });
    expect(outcomes[1]).toEqual({
      status: 'rejected',
      reason: new InputKeyReusedError(['approve']),
    });
    expect(outcomes[2]).toEqual({
      status: 'rejected',
      reason: new StaleLeaseError(superseded!.taskId, superseded!.epoch),
    });
    expect((await rawRow(db, kept!.taskId))?.status).toBe('input_required');
    expect(await Promise.all([reused, superseded].map((f) => rawRow(db, f!.taskId)))).toEqual(
      before,
    );
  });

  it('a lone pause goes out at once as its single-row statement', async () => {
    const [fence] = await claimed(1);
    statements = [];
    await writes().requestInput(fence!, { approve: ask('Go on?') }, { done: 1 }, 'Waiting', {});
    expect(statements).toHaveLength(1);
    expect(statements[0]).not.toContain('unnest');
    expect((await rawRow(db, fence!.taskId))?.status).toBe('input_required');
  });
});

it('an unknown task id in a claim batch is just not claimed', async () => {
  const [id] = await freshTasks(1);
  const shared = writes();
  const [claim, missing] = await Promise.all([shared.claim(id!), shared.claim(newTaskId())]);
  expect(claim?.fence.taskId).toBe(id);
  expect(missing).toBeNull();
});
