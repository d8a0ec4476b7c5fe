import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTaskId, type InputResponses } from '@mcp-tasks/tasks';
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
import {
  CANCELLED_BY_REQUEST,
  RESUMED_MESSAGE,
  createTask,
  createTasks,
  getTask,
  getTaskForPrincipal,
  isLockNotAvailable,
  recordInputResponses,
  recordManyInputResponses,
  requestCancel,
} from './task-repository.js';

let fixture: StoreFixture;
let db: Db;
/** A second pool on the same database that records every statement it sends. */
let counted: { db: Db; statements: string[] };
beforeAll(async () => {
  fixture = await createStoreFixture('task_repository');
  db = fixture.db;
  const statements: string[] = [];
  counted = {
    statements,
    db: createDb({
      connectionString: fixture.database.connectionString,
      max: 2,
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

const mallory = { tenant: 'acme', principal: 'mallory' };
const otherTenant = { tenant: 'globex', principal: 'alice' };

/** A task parked in input_required with the given keys. */
async function parkedTask(keys: string[]): Promise<string> {
  const { task } = await createTask(db, newTask());
  const claim = await claimLease(db, task.id, 'worker-1', 30_000);
  const requests = Object.fromEntries(keys.map((key) => [key, { method: 'elicitation/create' }]));
  await requestInput(db, claim!.fence, requests, { step: 1 }, 'waiting');
  return task.id;
}

describe('createTask', () => {
  it('stores a working task with one statement', async () => {
    const input = newTask({ statusMessage: 'queued', ttlMs: 3_000_000_000 });
    const { task, created, woken } = await createTask(counted.db, input);
    expect(counted.statements.splice(0)).toHaveLength(1);
    expect({ created, woken }).toEqual({ created: true, woken: false });
    expect(task).toMatchObject({
      id: input.id,
      owner: alice,
      operation: input.operation,
      status: 'working',
      statusMessage: 'queued',
      ttlMs: 3_000_000_000,
      pollIntervalMs: 500,
      result: null,
      error: null,
      inputRequests: {},
      issuedInputKeys: [],
      inputResponses: {},
      cancelRequestedAt: null,
      checkpoint: null,
      lease: null,
      leaseEpoch: 0,
      attempts: 0,
      failures: 0,
    });
    expect(task.lastUpdatedAt).toEqual(task.createdAt);
    const row = await rawRow(db, input.id);
    expect(row!.expires_at!.getTime()).toBe(task.createdAt.getTime() + 3_000_000_000);
    expect(await getTask(db, input.id)).toEqual(task);
  });

  it('keeps a task without a ttl from ever expiring', async () => {
    const { task } = await createTask(db, newTask({ ttlMs: null, pollIntervalMs: null }));
    expect(task.ttlMs).toBeNull();
    expect(task.pollIntervalMs).toBeNull();
    expect((await rawRow(db, task.id))!.expires_at).toBeNull();
  });

  it('refuses a malformed id', async () => {
    await expect(createTask(db, newTask({ id: 'nope' }))).rejects.toBeInstanceOf(RangeError);
  });

  it('answers a repeat by the same owner with the existing task, and refuses anyone else', async () => {
    const input = newTask();
    const first = await createTask(db, input);
    expect(first.created).toBe(true);
    const repeat = await createTask(db, input);
    expect(repeat).toMatchObject({ created: false, task: first.task });
    await expect(
      createTask(db, { ...input, owner: { tenant: 'globex', principal: 'mallory' } }),
    ).rejects.toBeInstanceOf(TaskIdConflictError);
  });
});

describe('createTasks', () => {
  it('inserts a batch with one statement and answers each input on its own', async () => {
    const existing = newTask();
    await createTask(db, existing);
    const fresh = [newTask(), newTask({ ttlMs: null })];
    const foreign = { ...existing, owner: { tenant: 'globex', principal: 'mallory' } };
    const twin = newTask();
    const outcomes = await createTasks(counted.db, [
      fresh[0]!,
      existing,
      newTask({ id: 'nope' }),
      foreign,
      twin,
      fresh[1]!,
      twin,
    ]);
    expect(counted.statements.splice(0)).toHaveLength(1);
    const summary = outcomes.map((o) =>
      o.ok ? { id: o.value.task.id, created: o.value.created } : { error: (o.error as Error).name },
    );
    expect(summary).toEqual([
      { id: fresh[0]!.id, created: true },
      { id: existing.id, created: false },
      { error: 'RangeError' },
      { error: 'TaskIdConflictError' },
      { id: twin.id, created: true },
      { id: fresh[1]!.id, created: true },
      // The same id twice in one batch: the second is a repeat of the first, not a second row.
      { id: twin.id, created: false },
    ]);
    for (const input of [...fresh, twin]) {
      expect((await getTask(db, input.id))?.status).toBe('working');
    }
    expect((await rawRow(db, existing.id))?.tenant).toBe(alice.tenant);
  });

  it('fails only the row whose values the database refuses, and inserts the others', async () => {
    const good = [newTask(), newTask()];
    const bad = newTask({ ttlMs: -1 });
    const outcomes = await createTasks(db, [good[0]!, bad, good[1]!]);
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
    const refused = outcomes[1] as { ok: false; error: { code?: string; constraint?: string } };
    expect(refused.error).toMatchObject({ code: '23514', constraint: 'tasks_ttl_non_negative' });
    expect(await rawRow(db, bad.id)).toBeUndefined();
    for (const input of good) expect((await getTask(db, input.id))?.status).toBe('working');
  });

  it('says whether a wake-up is known to have reached an existing task', async () => {
    const input = newTask();
    await createTask(db, input);
    expect((await createTask(db, input)).woken).toBe(false);
    await claimLease(db, input.id, 'worker-1', 30_000);
    expect((await createTask(db, input)).woken).toBe(true);
  });
});

describe('getTaskForPrincipal', () => {
  it('finds a task only for its own tenant and principal', async () => {
    const { task } = await createTask(db, newTask());
    expect(await getTaskForPrincipal(db, 'acme', 'alice', task.id)).toEqual(task);
    expect(await getTaskForPrincipal(db, 'acme', 'mallory', task.id)).toBeUndefined();
    expect(await getTaskForPrincipal(db, 'globex', 'alice', task.id)).toBeUndefined();
  });

  it('answers a missing id and a malformed id exactly like a foreign one', async () => {
    expect(await getTaskForPrincipal(db, 'acme', 'alice', newTaskId())).toBeUndefined();
    expect(await getTaskForPrincipal(db, 'acme', 'alice', "tsk_' OR 1=1 --")).toBeUndefined();
    expect(await getTask(db, 'x'.repeat(500))).toBeUndefined();
  });
});

describe('recordInputResponses', () => {
  it('records an answer to one of two keys and stays input_required', async () => {
    const id = await parkedTask(['a', 'b']);
    const outcome = await recordInputResponses(db, alice, id, { a: { action: 'accept' } });
    expect(outcome).toEqual({ found: true, resumed: false });
    const task = await getTask(db, id);
    expect(task).toMatchObject({
      status: 'input_required',
      inputRequests: { b: { method: 'elicitation/create' } },
      inputResponses: { a: { action: 'accept' } },
      issuedInputKeys: ['a', 'b'],
    });
  });

  it('resumes the task, unleased and not enqueued, when the last key is answered', async () => {
    const id = await parkedTask(['a', 'b']);
    await recordInputResponses(db, alice, id, { a: { action: 'accept' } });
    const outcome = await recordInputResponses(db, alice, id, { b: { action: 'decline' } });
    expect(outcome).toEqual({ found: true, resumed: true });
    const task = await getTask(db, id);
    expect(task).toMatchObject({
      status: 'working',
      statusMessage: RESUMED_MESSAGE,
      inputRequests: {},
      inputResponses: { a: { action: 'accept' }, b: { action: 'decline' } },
      lease: null,
      checkpoint: { step: 1 },
    });
    expect((await rawRow(db, id))!.enqueued_at).toBeNull();
    // The resumed task is claimable again.
    expect(await claimLease(db, id, 'worker-2', 30_000)).not.toBeNull();
  });

  it('ignores answers to keys that are not outstanding, and changes nothing', async () => {
    const id = await parkedTask(['a']);
    const before = await rawRow(db, id);
    const outcome = await recordInputResponses(db, alice, id, { zzz: { action: 'accept' } });
    expect(outcome).toEqual({ found: true, resumed: false });
    expect(await rawRow(db, id)).toEqual(before);
  });

  it('ignores a late answer once the key was answered and the task resumed', async () => {
    const id = await parkedTask(['a']);
    expect(await recordInputResponses(db, alice, id, { a: { n: 1 } })).toEqual({
      found: true,
      resumed: true,
    });
    const before = await rawRow(db, id);
    expect(await recordInputResponses(db, alice, id, { a: { n: 2 } })).toEqual({
      found: true,
      resumed: false,
    });
    expect(await rawRow(db, id)).toEqual(before);
  });

  it('treats a foreign task as missing and leaves it unchanged', async () => {
    const id = await parkedTask(['a']);
    const before = await rawRow(db, id);
    for (const owner of [mallory, otherTenant]) {
      expect(await recordInputResponses(db, owner, id, { a: { x: 1 } })).toEqual({
        found: false,
        resumed: false,
      });
    }
    expect(await recordInputResponses(db, alice, 'bogus', { a: { x: 1 } })).toEqual({
      found: false,
      resumed: false,
    });
    expect(await rawRow(db, id)).toEqual(before);
  });
});

describe('recordManyInputResponses (one statement for several tasks)', () => {
  /** A row without what differs between two tasks made the same way (id, times, fair round). */
  const comparable = async (id: string) => {
    const row: Record<string, unknown> = { ...(await rawRow(db, id))! };
    const { id: _id, fair_round: _round, ...rest } = row;
    return Object.fromEntries(
      Object.entries(rest).map(([column, value]) => [column, value instanceof Date || value]),
    );
  };
  /** Each case: how its task is made, then who answers what. */
  const cases: {
    name: string;
    make: () => Promise<string>;
    owner?: typeof alice;
    responses: InputResponses;
  }[] = [
    { name: 'one of two keys', make: () => parkedTask(['a', 'b']), responses: { a: { n: 1 } } },
    {
      name: 'the last keys, with one never issued',
      make: () => parkedTask(['a', 'b']),
      responses: { a: { n: 1 }, b: { n: 2 }, zzz: { n: 3 } },
    },
    { name: 'no outstanding key', make: () => parkedTask(['a']), responses: { zzz: {} } },
    {
      name: 'a late answer after the resume',
      make: async () => {
        const id = await parkedTask(['a']);
        await recordInputResponses(db, alice, id, { a: { n: 1 } });
        return id;
      },
      responses: { a: { n: 2 } },
    },
    {
      name: 'a cancelled task',
      make: async () => {
        const id = await parkedTask(['a']);
        await requestCancel(db, alice, id);
        return id;
      },
      responses: { a: { n: 1 } },
    },
    {
      name: 'a working task',
      make: async () => (await createTask(db, newTask())).task.id,
      responses: { a: { n: 1 } },
    },
    {
      name: "another principal's task",
      make: () => parkedTask(['a']),
      owner: mallory,
      responses: { a: { n: 1 } },
    },
    {
      name: "another tenant's task",
      make: () => parkedTask(['a']),
      owner: otherTenant,
      responses: { a: { n: 1 } },
    },
  ];

  it("gives each task recordInputResponses' own outcome and row, with one statement for all", async () => {
    const alone = await Promise.all(cases.map((c) => c.make()));
    const shared = await Promise.all(cases.map((c) => c.make()));
    const aloneOutcomes = [];
    for (const [index, c] of cases.entries()) {
      aloneOutcomes.push(
        await recordInputResponses(db, c.owner ?? alice, alone[index]!, c.responses),
      );
    }
    counted.statements.splice(0);
    const sharedOutcomes = await recordManyInputResponses(
      counted.db,
      cases.map((c, index) => ({
        owner: c.owner ?? alice,
        taskId: shared[index]!,
        responses: c.responses,
      })),
    );
    expect(counted.statements.splice(0)).toHaveLength(1);
    expect(sharedOutcomes).toEqual(aloneOutcomes);
    expect(aloneOutcomes.map((o) => [o.found, o.resumed])).toEqual([
      [true, false],
      [true, true],
      [true, false],
      [true, false],
      [true, false],
      [true, false],
      [false, false],
      [false, false],
    ]);
    for (const [index] of cases.entries()) {
      expect(await comparable(shared[index]!)).toEqual(await comparable(alone[index]!));
    }
  });

  it('answers a missing and a malformed id as not found without failing the others', async () => {
    const id = await parkedTask(['a']);
    expect(
      await recordManyInputResponses(db, [
        { owner: alice, taskId: newTaskId(), responses: { a: {} } },
        { owner: alice, taskId: "tsk_' OR 1=1 --", responses: { a: {} } },
        { owner: alice, taskId: id, responses: { a: { n: 1 } } },
      ]),
    ).toEqual([
      { found: false, resumed: false },
      { found: false, resumed: false },
      { found: true, resumed: true },
    ]);
  });

  it('fails at once, writing nothing, when another transaction holds one of its rows', async () => {
    const [held, free] = [await parkedTask(['a']), await parkedTask(['a'])];
    const before = await rawRow(db, free);
    const holder = await db.startTransaction().execute();
    try {
      await holder.selectFrom('tasks').select('id').where('id', '=', held).forUpdate().execute();
      const failed = await recordManyInputResponses(db, [
        { owner: alice, taskId: free, responses: { a: { n: 1 } } },
        { owner: alice, taskId: held, responses: { a: { n: 2 } } },
      ]).catch((error: unknown) => error);
      expect(isLockNotAvailable(failed)).toBe(true);
      expect(await rawRow(db, free)).toEqual(before);
    } finally {
      await holder.rollback().execute();
    }
  });

  it('refuses the same task twice in one statement (the caller sends repeats on their own)', async () => {
    const id = await parkedTask(['a', 'b']);
    await expect(
      recordManyInputResponses(db, [
        { owner: alice, taskId: id, responses: { a: {} } },
        { owner: alice, taskId: id, responses: { b: {} } },
      ]),
    ).rejects.toThrow(RangeError);
  });
});

describe('requestCancel', () => {
  it('cancels a task waiting for input at once', async () => {
    const id = await parkedTask(['a']);
    expect(await requestCancel(db, alice, id)).toEqual({ found: true, cancelledDirectly: true });
    const task = await getTask(db, id);
    expect(task).toMatchObject({
      status: 'cancelled',
      statusMessage: CANCELLED_BY_REQUEST,
      inputRequests: {},
      lease: null,
    });
    expect(task!.cancelRequestedAt).toBeInstanceOf(Date);
  });

  it('cancels an unleased working task at once', async () => {
    const { task } = await createTask(db, newTask());
    expect(await requestCancel(db, alice, task.id)).toEqual({
      found: true,
      cancelledDirectly: true,
    });
    expect((await getTask(db, task.id))!.status).toBe('cancelled');
    expect(await claimLease(db, task.id, 'worker-1', 30_000)).toBeNull();
  });

  it('cancels a working task whose lease expired at once', async () => {
    const { task } = await createTask(db, newTask());
    await claimLease(db, task.id, 'worker-1', 30_000);
    await db
      .updateTable('tasks')
      .set({ lease_expires_at: new Date(Date.now() - 60_000) })
      .where('id', '=', task.id)
      .execute();
    expect(await requestCancel(db, alice, task.id)).toEqual({
      found: true,
      cancelledDirectly: true,
    });
    expect(await getTask(db, task.id)).toMatchObject({ status: 'cancelled', lease: null });
  });

  it('only records the intent on a task a worker holds, once', async () => {
    const { task } = await createTask(db, newTask());
    await claimLease(db, task.id, 'worker-1', 30_000);
    expect(await requestCancel(db, alice, task.id)).toEqual({
      found: true,
      cancelledDirectly: false,
    });
    const first = await getTask(db, task.id);
    expect(first).toMatchObject({ status: 'working', lease: { owner: 'worker-1', epoch: 1 } });
    expect(first!.cancelRequestedAt).toBeInstanceOf(Date);
    expect(await requestCancel(db, alice, task.id)).toEqual({
      found: true,
      cancelledDirectly: false,
    });
    expect((await getTask(db, task.id))!.cancelRequestedAt).toEqual(first!.cancelRequestedAt);
  });

  it('records the intent on a terminal task without changing its status', async () => {
    const { task } = await createTask(db, newTask());
    await requestCancel(db, alice, task.id);
    const cancelled = await rawRow(db, task.id);
    expect(await requestCancel(db, alice, task.id)).toEqual({
      found: true,
      cancelledDirectly: false,
    });
    expect(await rawRow(db, task.id)).toEqual(cancelled);
  });

  it('treats a foreign or missing task as not found and leaves it unchanged', async () => {
    const { task } = await createTask(db, newTask());
    const before = await rawRow(db, task.id);
    expect(await requestCancel(db, mallory, task.id)).toEqual({
      found: false,
      cancelledDirectly: false,
    });
    expect(await requestCancel(db, otherTenant, task.id)).toEqual({
      found: false,
      cancelledDirectly: false,
    });
    expect(await requestCancel(db, alice, newTaskId())).toEqual({
      found: false,
      cancelledDirectly: false,
    });
    expect(await rawRow(db, task.id)).toEqual(before);
  });
});

describe('the schema itself', () => {
  it('refuses any change to a terminal task, even by hand', async () => {
    const { task } = await createTask(db, newTask());
    await requestCancel(db, alice, task.id);
    await expect(
      db.updateTable('tasks').set({ status: 'working' }).where('id', '=', task.id).execute(),
    ).rejects.toThrow(/can never change again/);
    await expect(
      db.updateTable('tasks').set({ status_message: 'x' }).where('id', '=', task.id).execute(),
    ).rejects.toThrow(/can never change again/);
  });

  it('refuses a result on a task that is not completed', async () => {
    const { task } = await createTask(db, newTask());
    await expect(
      db
        .updateTable('tasks')
        .set({ result: { content: [] } })
        .where('id', '=', task.id)
        .execute(),
    ).rejects.toThrow(/tasks_result_iff_completed/);
  });
});
