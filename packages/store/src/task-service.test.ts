import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTaskId } from '@mcp-tasks/tasks';
import { alice, createStoreFixture, newTask, rawRow, type StoreFixture } from '../test/helpers.js';
import type { Db } from './database.js';
import { TaskIdConflictError } from './errors.js';
import { claimLease, requestInput } from './lease.js';
import { findOrphans } from './sweeper-repository.js';
import { getTask } from './task-repository.js';
import { createTaskService, type TaskDispatcher } from './task-service.js';

let fixture: StoreFixture;
let db: Db;
beforeAll(async () => {
  fixture = await createStoreFixture('task_service');
  db = fixture.db;
});
afterAll(() => fixture.close());

type Reason = Parameters<TaskDispatcher['enqueue']>[1];

/** Not a fake queue: a recorder standing where the queue producer goes, optionally refusing. */
function recordingDispatcher(fail = false) {
  const calls: { taskId: string; reason: Reason }[] = [];
  const dispatcher: TaskDispatcher = {
    enqueue(taskId, reason) {
      calls.push({ taskId, reason });
      return fail ? Promise.reject(new Error('redis is down')) : Promise.resolve();
    },
  };
  return { calls, dispatcher };
}

const future = (ms: number) => new Date(Date.now() + ms);

describe('createAndDispatch', () => {
  it('commits, enqueues and marks the task enqueued', async () => {
    const { calls, dispatcher } = recordingDispatcher();
    const service = createTaskService({ db, dispatcher });
    const input = newTask();
    const task = await service.createAndDispatch(input);
    expect(task).toMatchObject({ id: input.id, status: 'working' });
    expect(calls).toEqual([{ taskId: input.id, reason: 'created' }]);
    expect((await rawRow(db, input.id))!.enqueued_at).toBeInstanceOf(Date);
  });

  it('answers a repeated create with the same task and enqueues it once', async () => {
    const { calls, dispatcher } = recordingDispatcher();
    const service = createTaskService({ db, dispatcher });
    const input = newTask();
    const first = await service.createAndDispatch(input);
    const again = await service.createAndDispatch({ ...input, statusMessage: 'ignored' });
    expect(again).toEqual(first);
    expect(calls).toEqual([{ taskId: input.id, reason: 'created' }]);
  });

  it("refuses an id that names another owner's or another operation's task", async () => {
    const { dispatcher } = recordingDispatcher();
    const service = createTaskService({ db, dispatcher });
    const input = newTask();
    await service.createAndDispatch(input);
    const before = await rawRow(db, input.id);
    await expect(
      service.createAndDispatch({ ...input, owner: { tenant: 'globex', principal: 'mallory' } }),
    ).rejects.toBeInstanceOf(TaskIdConflictError);
    await expect(
      service.createAndDispatch({
        ...input,
        operation: { ...input.operation, arguments: { seconds: 99 } },
      }),
    ).rejects.toBeInstanceOf(TaskIdConflictError);
    expect(await rawRow(db, input.id)).toEqual(before);
  });

  it('still returns the durable task when the enqueue fails, and the sweep finds it', async () => {
    const failures: { taskId: string; error: unknown }[] = [];
    const { dispatcher } = recordingDispatcher(true);
    const service = createTaskService({
      db,
      dispatcher,
      onDispatchError: (taskId, error) => failures.push({ taskId, error }),
      enqueueGraceMs: 1_000,
    });
    const task = await service.createAndDispatch(newTask());
    expect(await getTask(db, task.id)).toEqual(task);
    expect(failures).toHaveLength(1);
    expect(failures[0]!.taskId).toBe(task.id);
    expect((failures[0]!.error as Error).message).toBe('redis is down');
    expect((await rawRow(db, task.id))!.enqueued_at).toBeNull();
    expect(
      await findOrphans(db, future(5_000), { enqueueGraceMs: 1_000, limit: 10_000 }),
    ).toContain(task.id);

    // The sweeper, once the queue is back, wakes it and marks it.
    const healthy = recordingDispatcher();
    const sweeper = createTaskService({
      db,
      dispatcher: healthy.dispatcher,
      enqueueGraceMs: 1_000,
    });
    const swept = await sweeper.redispatchOrphans(future(5_000));
    expect(swept.woken).toBeGreaterThanOrEqual(1);
    expect(healthy.calls).toContainEqual({ taskId: task.id, reason: 'swept' });
    expect((await rawRow(db, task.id))!.enqueued_at).toBeInstanceOf(Date);
    expect(
      await findOrphans(db, future(500), { enqueueGraceMs: 1_000, limit: 10_000 }),
    ).not.toContain(task.id);
  });

  it('does not count a failed sweep enqueue as dispatched', async () => {
    const task = await createTaskService({
      db,
      dispatcher: recordingDispatcher(true).dispatcher,
    }).createAndDispatch(newTask());
    const failing = recordingDispatcher(true);
    const errors: string[] = [];
    const sweeper = createTaskService({
      db,
      dispatcher: failing.dispatcher,
      enqueueGraceMs: 0,
      onDispatchError: (taskId) => errors.push(taskId),
    });
    const swept = await sweeper.redispatchOrphans(future(60_000));
    expect(swept.woken).toBe(0);
    expect(swept.failed).toBe(swept.found);
    expect(errors).toContain(task.id);
  });
});

describe('submitInputResponses', () => {
  it('dispatches the task once, when the last answer resumes it', async () => {
    const { calls, dispatcher } = recordingDispatcher();
    const service = createTaskService({ db, dispatcher });
    const task = await service.createAndDispatch(newTask());
    const fence = (await claimLease(db, task.id, 'w', 30_000))!.fence;
    await requestInput(db, fence, { a: { m: 1 }, b: { m: 2 } }, null, null);

    expect(await service.submitInputResponses(alice, task.id, { a: { ok: 1 } })).toEqual({
      found: true,
    });
    expect(calls.filter((c) => c.reason === 'resumed')).toHaveLength(0);
    expect(await service.submitInputResponses(alice, task.id, { b: { ok: 2 } })).toEqual({
      found: true,
    });
    expect(await service.submitInputResponses(alice, task.id, { b: { ok: 3 } })).toEqual({
      found: true,
    });
    expect(calls).toEqual([
      { taskId: task.id, reason: 'created' },
      { taskId: task.id, reason: 'resumed' },
    ]);
    expect((await rawRow(db, task.id))!.enqueued_at).toBeInstanceOf(Date);
  });

  it('reports a foreign task as not found and dispatches nothing', async () => {
    const { calls, dispatcher } = recordingDispatcher();
    const service = createTaskService({ db, dispatcher });
    const task = await service.createAndDispatch(newTask());
    const fence = (await claimLease(db, task.id, 'w', 30_000))!.fence;
    await requestInput(db, fence, { a: { m: 1 } }, null, null);
    expect(
      await service.submitInputResponses({ tenant: 'acme', principal: 'eve' }, task.id, { a: {} }),
    ).toEqual({ found: false });
    expect(await service.submitInputResponses(alice, newTaskId(), { a: {} })).toEqual({
      found: false,
    });
    expect(calls).toEqual([{ taskId: task.id, reason: 'created' }]);
    expect((await getTask(db, task.id))!.status).toBe('input_required');
  });
});

describe('cancel', () => {
  it('records the request for the owner only', async () => {
    const { dispatcher } = recordingDispatcher();
    const service = createTaskService({ db, dispatcher });
    const task = await service.createAndDispatch(newTask());
    expect(await service.cancel({ tenant: 'other', principal: 'alice' }, task.id)).toEqual({
      found: false,
    });
    expect((await getTask(db, task.id))!.cancelRequestedAt).toBeNull();
    expect(await service.cancel(alice, task.id)).toEqual({ found: true });
    expect(await getTask(db, task.id)).toMatchObject({ status: 'cancelled' });
    expect(await service.cancel(alice, task.id)).toEqual({ found: true });
  });
});
