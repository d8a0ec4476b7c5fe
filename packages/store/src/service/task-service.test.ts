import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTaskId } from '@mcp-tasks/tasks';
import {
  alice,
  createStoreFixture,
  newTask,
  rawRow,
  type StoreFixture,
} from '../../test/helpers.js';
import { createDb, type Db } from '../db/database.js';
import { TaskIdConflictError } from '../errors.js';
import { claimLease } from '../lease/lease.js';
import { requestInput } from '../lease/fenced-task-writes.js';
import { createOrphanWaker } from '../sweeper/orphan-waker.js';
import { findOrphans } from '../sweeper/sweeper-repository.js';
import { getTask } from '../rows/task-repository.js';
import type { WakeUpQueue } from '../wake-up/outbox.js';
import { createTaskService, DEFAULT_WAKE_UP_LINGER_MS } from './task-service.js';

let fixture: StoreFixture;
let db: Db;
/** A second pool on the same database that records every statement it sends. */
let counted: { db: Db; statements: string[] };
beforeAll(async () => {
  fixture = await createStoreFixture('task_service');
  db = fixture.db;
  const statements: string[] = [];
  counted = {
    statements,
    db: createDb({
      connectionString: fixture.database.connectionString,
      max: 4,
      log: (event) => {
        if (event.level === 'query') statements.push(event.query.sql);
      },
    }),
  };
});
afterAll(async () => {
  await counted.db.destroy();
  await fixture.close();
});

type Reason = Parameters<WakeUpQueue['wake']>[1];

/** Not a fake queue: a recorder standing where the queue producer goes, optionally refusing. */
function recordingWakeUpQueue(fail = false) {
  const calls: { taskId: string; reason: Reason }[] = [];
  const wakeUpQueue: WakeUpQueue = {
    wake(taskId, reason) {
      calls.push({ taskId, reason });
      return fail ? Promise.reject(new Error('redis is down')) : Promise.resolve();
    },
  };
  return { calls, wakeUpQueue };
}

/** A recorder whose wake-ups stay unanswered, as Redis that has not replied yet, until `answer`. */
function unansweredWakeUpQueue() {
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const sent: string[] = [];
  const wakeUpQueue: WakeUpQueue = {
    async wake(taskId) {
      sent.push(taskId);
      await answered;
    },
  };
  return { sent, wakeUpQueue, answer };
}

const future = (ms: number) => new Date(Date.now() + ms);

describe('createAndWake', () => {
  it('commits with one statement and wakes, with no outbox mark: the row is the outbox', async () => {
    const { calls, wakeUpQueue } = recordingWakeUpQueue();
    const service = createTaskService({ db: counted.db, wakeUpQueue });
    const input = newTask();
    const task = await service.createAndWake(input);
    expect(task).toMatchObject({ id: input.id, status: 'working' });
    await service.settleWakeUps();
    expect(calls).toEqual([{ taskId: input.id, reason: 'created' }]);
    expect(counted.statements.splice(0)).toHaveLength(1);
    expect((await rawRow(db, input.id))!.enqueued_at).toBeNull();
    // Within the grace the sweeper leaves it to the wake-up just sent; past it, unclaimed, the
    // row alone makes it an orphan again (the wake-up was lost, or Redis was flushed).
    expect(
      await findOrphans(db, future(500), { wakeUpGraceMs: 1_000, limit: 10_000 }),
    ).not.toContain(task.id);
    expect(await findOrphans(db, future(5_000), { wakeUpGraceMs: 1_000, limit: 10_000 })).toContain(
      task.id,
    );
  });

  it('answers before the wake-up is sent, sends it once its linger is over, and settles once Redis answers', async () => {
    // Redis that has not answered yet: the create must not wait for it.
    const { sent, wakeUpQueue, answer } = unansweredWakeUpQueue();
    const service = createTaskService({ db, wakeUpQueue });
    const task = await service.createAndWake(newTask());
    expect(sent).toEqual([]);
    expect((await rawRow(db, task.id))!.status).toBe('working');
    let settled = false;
    const settling = service.settleWakeUps().then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, DEFAULT_WAKE_UP_LINGER_MS + 50));
    expect(sent).toEqual([task.id]);
    expect(settled).toBe(false);
    answer();
    await settling;
    expect(settled).toBe(true);
  });

  it('makes a create wait for its own wake-up while too many are unsent (backpressure)', async () => {
    const { sent, wakeUpQueue, answer } = unansweredWakeUpQueue();
    const service = createTaskService({ db, wakeUpQueue, maxPendingWakeUps: 2 });
    await service.createAndWake(newTask());
    await service.createAndWake(newTask());
    let thirdReturned = false;
    const third = service.createAndWake(newTask()).then((task) => {
      thirdReturned = true;
      return task;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // One batch in flight at a time: the first wake-up is on the wire, the other two wait for it.
    expect(sent).toHaveLength(1);
    expect(thirdReturned).toBe(false);
    answer();
    const task = await third;
    expect(sent[2]).toBe(task.id);
    await service.settleWakeUps();
  });

  it('answers a repeated create with the same task and wakes it once', async () => {
    const { calls, wakeUpQueue } = recordingWakeUpQueue();
    const service = createTaskService({ db, wakeUpQueue });
    const input = newTask();
    const first = await service.createAndWake(input);
    const again = await service.createAndWake({ ...input, statusMessage: 'ignored' });
    expect(again).toEqual(first);
    await service.settleWakeUps();
    expect(calls).toEqual([{ taskId: input.id, reason: 'created' }]);
  });

  it("refuses an id that names another owner's or another operation's task", async () => {
    const { wakeUpQueue } = recordingWakeUpQueue();
    const service = createTaskService({ db, wakeUpQueue });
    const input = newTask();
    await service.createAndWake(input);
    const before = await rawRow(db, input.id);
    await expect(
      service.createAndWake({ ...input, owner: { tenant: 'globex', principal: 'mallory' } }),
    ).rejects.toBeInstanceOf(TaskIdConflictError);
    await expect(
      service.createAndWake({
        ...input,
        operation: { ...input.operation, arguments: { seconds: 99 } },
      }),
    ).rejects.toBeInstanceOf(TaskIdConflictError);
    expect(await rawRow(db, input.id)).toEqual(before);
  });

  it('still returns the durable task when the enqueue fails, and the sweep finds it', async () => {
    const failures: { taskId: string; error: unknown }[] = [];
    const { wakeUpQueue } = recordingWakeUpQueue(true);
    const service = createTaskService({
      db,
      wakeUpQueue,
      onWakeUpError: (taskId, error) => failures.push({ taskId, error }),
    });
    const task = await service.createAndWake(newTask());
    expect(await getTask(db, task.id)).toEqual(task);
    await service.settleWakeUps();
    expect(failures).toHaveLength(1);
    expect(failures[0]!.taskId).toBe(task.id);
    expect((failures[0]!.error as Error).message).toBe('redis is down');
    expect((await rawRow(db, task.id))!.enqueued_at).toBeNull();
    expect(await findOrphans(db, future(5_000), { wakeUpGraceMs: 1_000, limit: 10_000 })).toContain(
      task.id,
    );

    // The sweeper, once the queue is back, wakes it and marks it.
    const healthy = recordingWakeUpQueue();
    const sweeper = createOrphanWaker({
      db,
      wakeUpQueue: healthy.wakeUpQueue,
      wakeUpGraceMs: 1_000,
    });
    const swept = await sweeper.wakeOrphans(future(5_000));
    expect(swept.woken).toBeGreaterThanOrEqual(1);
    expect(healthy.calls).toContainEqual({ taskId: task.id, reason: 'swept' });
    expect((await rawRow(db, task.id))!.enqueued_at).toBeInstanceOf(Date);
    expect(
      await findOrphans(db, future(500), { wakeUpGraceMs: 1_000, limit: 10_000 }),
    ).not.toContain(task.id);
  });

  it('does not count a failed sweep wake-up as woken', async () => {
    const task = await createTaskService({
      db,
      wakeUpQueue: recordingWakeUpQueue(true).wakeUpQueue,
    }).createAndWake(newTask());
    const failing = recordingWakeUpQueue(true);
    const errors: string[] = [];
    const sweeper = createOrphanWaker({
      db,
      wakeUpQueue: failing.wakeUpQueue,
      wakeUpGraceMs: 0,
      onWakeUpError: (taskId) => errors.push(taskId),
    });
    const swept = await sweeper.wakeOrphans(future(60_000));
    expect(swept.woken).toBe(0);
    expect(swept.failed).toBe(swept.found);
    expect(errors).toContain(task.id);
  });
});

describe('createAndWake under concurrency (natural batching)', () => {
  /** Records each batch of created wake-ups the service hands over. */
  function batchRecordingWakeUpQueue() {
    const batches: string[][] = [];
    const wakeUpQueue: WakeUpQueue = {
      wake: () => Promise.reject(new Error('a batch wake-up queue is not called one by one')),
      wakeBatch(taskIds, reason) {
        if (reason === 'created') batches.push([...taskIds]);
        return Promise.resolve();
      },
    };
    return { batches, wakeUpQueue };
  }
  const inserts = () => counted.statements.splice(0).filter((q) => /insert into/i.test(q));

  it('inserts concurrent creates with one statement and wakes them with one batch, each caller getting its own task', async () => {
    const { batches, wakeUpQueue } = batchRecordingWakeUpQueue();
    const service = createTaskService({ db: counted.db, wakeUpQueue });
    counted.statements.splice(0);
    const inputs = Array.from({ length: 20 }, (_, i) =>
      newTask({
        operation: { method: 'tools/call', toolName: 'slow_compute', arguments: { seconds: i } },
      }),
    );
    const tasks = await Promise.all(inputs.map((input) => service.createAndWake(input)));
    expect(tasks.map((t) => [t.id, t.operation.arguments])).toEqual(
      inputs.map((i) => [i.id, i.operation.arguments]),
    );
    expect(inserts()).toHaveLength(1);
    await service.settleWakeUps();
    expect(batches).toEqual([inputs.map((i) => i.id)]);
    for (const input of inputs) expect((await getTask(db, input.id))?.status).toBe('working');
  });

  it('sends the creates that arrive while a batch is in flight together in the next one', async () => {
    const { wakeUpQueue } = batchRecordingWakeUpQueue();
    const service = createTaskService({ db: counted.db, wakeUpQueue });
    counted.statements.splice(0);
    const first = service.createAndWake(newTask());
    // Queued while the first INSERT is on the wire.
    await new Promise((resolve) => setImmediate(resolve));
    const later = Array.from({ length: 10 }, () => service.createAndWake(newTask()));
    await Promise.all([first, ...later]);
    expect(inserts().length).toBeLessThanOrEqual(2);
  });

  it("fails only the caller whose row is refused; the batch's other creates succeed", async () => {
    const { batches, wakeUpQueue } = batchRecordingWakeUpQueue();
    const service = createTaskService({ db: counted.db, wakeUpQueue });
    const taken = newTask();
    await service.createAndWake(taken);
    await service.settleWakeUps();
    batches.splice(0);
    counted.statements.splice(0);
    const others = [newTask(), newTask()];
    const outcomes = await Promise.allSettled([
      service.createAndWake(others[0]!),
      service.createAndWake({ ...taken, owner: { tenant: 'globex', principal: 'mallory' } }),
      service.createAndWake(newTask({ pollIntervalMs: 0 })),
      service.createAndWake(others[1]!),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(TaskIdConflictError);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({
      code: '23514',
      constraint: 'tasks_poll_interval_positive',
    });
    await service.settleWakeUps();
    expect(batches).toEqual([others.map((t) => t.id)]);
  });

  it('answers a repeat of a derived id from the same batch once, and wakes the task once', async () => {
    const { batches, wakeUpQueue } = batchRecordingWakeUpQueue();
    const service = createTaskService({ db: counted.db, wakeUpQueue });
    const input = newTask();
    const [a, b] = await Promise.all([
      service.createAndWake(input, { derivedId: true }),
      service.createAndWake(input, { derivedId: true }),
    ]);
    expect(a).toEqual(b);
    await service.settleWakeUps();
    // The repeat also asks for the wake-up (it cannot tell the first one went out); the job id is
    // the task id, so the queue keeps one (task-queue.test.ts, wakeBatch).
    expect(batches.flat().every((id) => id === input.id)).toBe(true);
  });

  it('wakes a derived-id repeat of a task no worker has claimed, and not one a worker holds', async () => {
    const { calls, wakeUpQueue } = recordingWakeUpQueue();
    const service = createTaskService({ db, wakeUpQueue });
    const input = newTask();
    await service.createAndWake(input, { derivedId: true });
    await service.createAndWake(input, { derivedId: true });
    await service.settleWakeUps();
    expect(calls.filter((c) => c.taskId === input.id)).toHaveLength(2);
    await claimLease(db, input.id, 'w', 30_000);
    await service.createAndWake(input, { derivedId: true });
    await service.settleWakeUps();
    expect(calls.filter((c) => c.taskId === input.id)).toHaveLength(2);
    // A fresh-id create is never repeated by a client; a repeat of it wakes nothing.
    const fresh = newTask();
    await service.createAndWake(fresh);
    await service.createAndWake(fresh);
    await service.settleWakeUps();
    expect(calls.filter((c) => c.taskId === fresh.id)).toHaveLength(1);
  });
});

describe('submitInputResponses', () => {
  it('wakes the task once, when the last answer resumes it', async () => {
    const { calls, wakeUpQueue } = recordingWakeUpQueue();
    const service = createTaskService({ db, wakeUpQueue });
    const task = await service.createAndWake(newTask());
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
    await service.settleWakeUps();
    expect(calls).toEqual([
      { taskId: task.id, reason: 'created' },
      { taskId: task.id, reason: 'resumed' },
    ]);
    // No mark: the resume bumped last_updated_at, which gives the wake-up its grace.
    expect((await rawRow(db, task.id))!.enqueued_at).toBeNull();
    expect(
      await findOrphans(db, future(5_000), { wakeUpGraceMs: 30_000, limit: 10_000 }),
    ).not.toContain(task.id);
  });

  it('replies to concurrent answers before their wake-ups went out, which go in batches of resumes', async () => {
    const batches: { taskIds: string[]; reason: string }[] = [];
    const unanswered: (() => void)[] = [];
    const wakeUpQueue: WakeUpQueue = {
      wake: () => Promise.reject(new Error('a batch wake-up queue is not called one by one')),
      wakeBatch(taskIds, reason) {
        batches.push({ taskIds: [...taskIds], reason });
        return reason === 'resumed'
          ? new Promise<void>((resolve) => unanswered.push(resolve))
          : Promise.resolve();
      },
    };
    const service = createTaskService({ db, wakeUpQueue });
    const tasks = await Promise.all([1, 2, 3].map(() => service.createAndWake(newTask())));
    await service.settleWakeUps();
    for (const task of tasks) {
      const fence = (await claimLease(db, task.id, 'w', 30_000))!.fence;
      await requestInput(db, fence, { a: { m: 1 } }, null, null);
    }
    batches.splice(0);

    let replied = 0;
    const replies = tasks.map((task) =>
      service.submitInputResponses(alice, task.id, { a: { ok: 1 } }).then((reply) => {
        replied += 1;
        return reply;
      }),
    );
    const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));
    const resumedRows = async () =>
      (await Promise.all(tasks.map((task) => getTask(db, task.id)))).filter(
        (row) => row?.status === 'working',
      ).length;
    // Every answer replied to while the first batch of wake-ups is in flight, unanswered: a reply
    // waits for its write's commit, not for Redis (the sweeper recovers a lost wake-up).
    expect(await Promise.all(replies)).toEqual(tasks.map(() => ({ found: true })));
    expect(replied).toBe(tasks.length);
    expect(await resumedRows()).toBe(tasks.length);
    while (batches.length === 0) await tick();
    expect(unanswered.length).toBeGreaterThan(0);
    let settled = false;
    const settling = service.settleWakeUps().then(() => (settled = true));
    await tick(20);
    expect(settled).toBe(false);
    while (!settled) {
      for (const answer of unanswered.splice(0)) answer();
      await tick();
    }
    await settling;
    // One batch in flight at a time: the wake-ups that came meanwhile went together in the next.
    expect(batches.length).toBeLessThanOrEqual(2);
    expect(batches.every((batch) => batch.reason === 'resumed')).toBe(true);
    expect(batches.flatMap((batch) => batch.taskIds).sort()).toEqual(
      tasks.map((task) => task.id).sort(),
    );
  });

  it("answers the console's answer before the resume's wake-up went out, which goes after", async () => {
    const resumes: string[][] = [];
    const unanswered: (() => void)[] = [];
    const wakeUpQueue: WakeUpQueue = {
      wake: () => Promise.reject(new Error('a batch wake-up queue is not called one by one')),
      wakeBatch(taskIds, reason) {
        if (reason !== 'resumed') return Promise.resolve();
        resumes.push([...taskIds]);
        return new Promise<void>((resolve) => unanswered.push(resolve));
      },
    };
    const service = createTaskService({ db, wakeUpQueue });
    const task = await service.createAndWake(newTask());
    await service.settleWakeUps();
    const fence = (await claimLease(db, task.id, 'w', 30_000))!.fence;
    await requestInput(db, fence, { a: { m: 1 } }, null, null);
    const answer = service.console.answer({ tenant: null }, task.id, { a: { ok: 1 } }, 'console:x');
    const outcome = await Promise.race([
      answer,
      new Promise((resolve) => setTimeout(() => resolve('waited for the wake-up'), 3_000)),
    ]);
    expect(outcome).toEqual({ found: true, answered: ['a'] });
    while (unanswered.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    for (const release of unanswered.splice(0)) release();
    await service.settleWakeUps();
    expect(resumes).toEqual([[task.id]]);
  });

  it('reports a foreign task as not found and wakes nothing', async () => {
    const { calls, wakeUpQueue } = recordingWakeUpQueue();
    const service = createTaskService({ db, wakeUpQueue });
    const task = await service.createAndWake(newTask());
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

describe('tasks/update under concurrency (natural batching)', () => {
  /** A task of alice's parked in input_required with the given keys. */
  async function parked(
    service: ReturnType<typeof createTaskService>,
    keys: string[],
  ): Promise<string> {
    const task = await service.createAndWake(newTask());
    const fence = (await claimLease(db, task.id, 'w', 30_000))!.fence;
    const requests = Object.fromEntries(keys.map((key) => [key, { method: 'roots/list', n: key }]));
    await requestInput(db, fence, requests, null, null);
    return task.id;
  }

  it('reads the outstanding requests from the primary, concurrent reads with one statement', async () => {
    const { wakeUpQueue } = recordingWakeUpQueue();
    const service = createTaskService({ db: counted.db, wakeUpQueue });
    const ids = [await parked(service, ['a']), await parked(service, ['a', 'b'])];
    counted.statements.splice(0);
    expect(await service.getInputRequests(alice, ids[0]!)).toEqual({
      a: { method: 'roots/list', n: 'a' },
    });
    expect(counted.statements.splice(0)).toHaveLength(1);
    const eve = { tenant: 'acme', principal: 'eve' };
    const read = await Promise.all([
      service.getInputRequests(alice, ids[0]!),
      service.getInputRequests(alice, ids[1]!),
      service.getInputRequests(eve, ids[1]!),
      service.getInputRequests(alice, newTaskId()),
      service.getInputRequests(alice, 'bogus'),
    ]);
    expect(
      read.map((requests) => (requests === undefined ? undefined : Object.keys(requests))),
    ).toEqual([['a'], ['a', 'b'], undefined, undefined, undefined]);
    const statements = counted.statements.splice(0);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/unnest/);
  });

  it('writes concurrent answers with one statement, each caller answered on its own and each resumed task woken once', async () => {
    const { calls, wakeUpQueue } = recordingWakeUpQueue();
    const service = createTaskService({ db: counted.db, wakeUpQueue });
    const [one, two, three] = [
      await parked(service, ['a']),
      await parked(service, ['a', 'b']),
      await parked(service, ['a', 'b']),
    ];
    await service.settleWakeUps();
    calls.splice(0);
    counted.statements.splice(0);
    const eve = { tenant: 'acme', principal: 'eve' };
    const outcomes = await Promise.all([
      service.submitInputResponses(alice, one, { a: { ok: 1 } }),
      service.submitInputResponses(alice, two, { a: { ok: 2 } }),
      service.submitInputResponses(eve, three, { a: { ok: 3 } }),
      service.submitInputResponses(alice, newTaskId(), { a: {} }),
      // The same task twice in one batch: both answers count, one resumes it.
      service.submitInputResponses(alice, three, { a: { ok: 4 } }),
      service.submitInputResponses(alice, three, { b: { ok: 5 } }),
    ]);
    expect(outcomes).toEqual([
      { found: true },
      { found: true },
      { found: false },
      { found: false },
      { found: true },
      { found: true },
    ]);
    // One shared statement for the first write to each task (eve's, for the third); the repeats
    // go after it, one round each.
    await service.settleWakeUps();
    const statements = counted.statements.splice(0);
    expect(statements).toHaveLength(3);
    expect(statements.every((q) => /unnest/.test(q))).toBe(true);
    expect(calls.sort((x, y) => (x.taskId < y.taskId ? -1 : 1))).toEqual(
      [one, three].sort().map((taskId) => ({ taskId, reason: 'resumed' })),
    );
    expect(await getTask(db, one)).toMatchObject({
      status: 'working',
      inputResponses: { a: { ok: 1 } },
    });
    expect(await getTask(db, two)).toMatchObject({
      status: 'input_required',
      inputResponses: { a: { ok: 2 } },
    });
    expect(await getTask(db, three)).toMatchObject({
      status: 'working',
      inputResponses: { a: { ok: 4 }, b: { ok: 5 } },
    });
  });

  it('does not hold up the answers behind one whose row another transaction holds', async () => {
    const { calls, wakeUpQueue } = recordingWakeUpQueue();
    // No statement timeout: a statement that waited for the held row would wait until the end.
    const patient = createDb({
      connectionString: fixture.database.connectionString,
      max: 4,
      statementTimeoutMs: 0,
    });
    const service = createTaskService({ db: patient, wakeUpQueue });
    const [held, free, later] = [
      await parked(service, ['a']),
      await parked(service, ['a']),
      await parked(service, ['a']),
    ];
    await service.settleWakeUps();
    calls.splice(0);
    const holder = await db.startTransaction().execute();
    try {
      await holder.selectFrom('tasks').select('id').where('id', '=', held).forUpdate().execute();
      const heldAnswer = service.submitInputResponses(alice, held, { a: { ok: 1 } });
      // Shares the first statement with the held one, then a statement of its own.
      expect(await service.submitInputResponses(alice, free, { a: { ok: 2 } })).toEqual({
        found: true,
      });
      expect(await service.submitInputResponses(alice, later, { a: { ok: 3 } })).toEqual({
        found: true,
      });
      expect((await getTask(db, held))!.status).toBe('input_required');
      await holder.commit().execute();
      expect(await heldAnswer).toEqual({ found: true });
    } finally {
      await holder
        .rollback()
        .execute()
        .catch(() => undefined);
      // The wake-ups go just after the replies (Outbox.wakeAfterReply).
      await service.settleWakeUps();
      await patient.destroy();
    }
    expect(await getTask(db, held)).toMatchObject({
      status: 'working',
      inputResponses: { a: { ok: 1 } },
    });
    expect(calls.map((c) => c.taskId).sort()).toEqual([held, free, later].sort());
  });
});

describe('getTaskView under concurrency (natural batching)', () => {
  it('reads a lone poll with its own statement and concurrent polls with one, each caller getting its own answer', async () => {
    const { wakeUpQueue } = recordingWakeUpQueue();
    const service = createTaskService({ db: counted.db, wakeUpQueue });
    const tasks = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        service.createAndWake(newTask({ statusMessage: `n${i}` })),
      ),
    );
    await service.settleWakeUps();
    counted.statements.splice(0);
    const lone = await service.getTaskView(alice, tasks[0]!.id);
    expect(lone).toMatchObject({ id: tasks[0]!.id, statusMessage: 'n0' });
    expect(counted.statements.splice(0)).toHaveLength(1);

    const eve = { tenant: 'acme', principal: 'eve' };
    const views = await Promise.all([
      ...tasks.map((task) => service.getTaskView(alice, task.id)),
      service.getTaskView(eve, tasks[1]!.id),
      service.getTaskView(alice, tasks[2]!.id),
      service.getTaskView(alice, newTaskId()),
    ]);
    expect(views.map((view) => view?.statusMessage)).toEqual([
      'n0',
      'n1',
      'n2',
      'n3',
      'n4',
      undefined,
      'n2',
      undefined,
    ]);
    // Asked in the same turn, all eight share one statement.
    const statements = counted.statements.splice(0);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/unnest/);
  });
});

describe('cancel', () => {
  it('records the request for the owner only', async () => {
    const { wakeUpQueue } = recordingWakeUpQueue();
    const service = createTaskService({ db, wakeUpQueue });
    const task = await service.createAndWake(newTask());
    expect(await service.cancel({ tenant: 'other', principal: 'alice' }, task.id)).toEqual({
      found: false,
    });
    expect((await getTask(db, task.id))!.cancelRequestedAt).toBeNull();
    expect(await service.cancel(alice, task.id)).toEqual({ found: true });
    expect(await getTask(db, task.id)).toMatchObject({ status: 'cancelled' });
    expect(await service.cancel(alice, task.id)).toEqual({ found: true });
  });
});

describe('reads (the gateway reads only through the service)', () => {
  it('reads tasks/get from the replica when one is configured, everything else from the primary', async () => {
    const { wakeUpQueue } = recordingWakeUpQueue();
    const read: string[] = [];
    const readDb = createDb({
      connectionString: fixture.database.connectionString,
      max: 1,
      log: (event) => {
        if (event.level === 'query') read.push(event.query.sql);
      },
    });
    try {
      const service = createTaskService({ db: counted.db, readDb, wakeUpQueue });
      const task = await service.createAndWake(newTask());
      counted.statements.length = 0;
      read.length = 0;
      expect(await service.getTaskView(alice, task.id)).toMatchObject({ id: task.id });
      expect([read.length, counted.statements.length]).toEqual([1, 0]);
      expect(await service.getTaskViewsFromPrimary([{ ...alice, taskId: task.id }])).toMatchObject([
        { id: task.id },
      ]);
      expect(await service.getInputRequests(alice, task.id)).toEqual({});
      await service.flagListened([{ owner: alice, taskIds: [task.id] }]);
      expect([read.length, counted.statements.length]).toEqual([1, 3]);
      expect((await rawRow(db, task.id))!.listened).toBe(true);
      // Foreign owners see nothing, as in the repository functions.
      const mallory = { tenant: 'acme', principal: 'mallory' };
      expect(await service.getTaskView(mallory, task.id)).toBeUndefined();
      expect(await service.getTaskViewsFromPrimary([{ ...mallory, taskId: task.id }])).toEqual([
        undefined,
      ]);
      expect(await service.getInputRequests(mallory, task.id)).toBeUndefined();
      expect(service.databaseChecks.map((c) => c.name)).toEqual(['postgres', 'postgres_read']);
      await Promise.all(service.databaseChecks.map((c) => c.check()));
    } finally {
      await readDb.destroy();
    }
  });

  it('reads tasks/get from the primary when no replica is configured', async () => {
    const { wakeUpQueue } = recordingWakeUpQueue();
    const service = createTaskService({ db: counted.db, wakeUpQueue });
    const task = await service.createAndWake(newTask());
    counted.statements.length = 0;
    expect(await service.getTaskView(alice, task.id)).toMatchObject({ id: task.id });
    expect(counted.statements).toHaveLength(1);
    expect(service.databaseChecks.map((c) => c.name)).toEqual(['postgres']);
  });
});
