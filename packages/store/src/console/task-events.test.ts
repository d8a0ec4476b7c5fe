import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { alice, createStoreFixture, newTask, type StoreFixture } from '../../test/helpers.js';
import type { Db } from '../db/database.js';
import {
  completeTask,
  recordAttemptFailure,
  requestInput,
  saveCheckpoint,
} from '../lease/fenced-task-writes.js';
import { claimLease, releaseLease, renewLease } from '../lease/lease.js';
import { flagListenedTasks } from '../rows/listen-repository.js';
import { deleteExpiredTasks, expireTasks } from '../sweeper/sweeper-repository.js';
import { createTask, recordInputResponses, requestCancel } from '../rows/task-repository.js';
import { answerInputForOperator, cancelTasksForOperator } from './console-actions.js';
import { countTasksForOperator, listTasksForOperator } from './console-queries.js';
import { stepStartsFolded } from '../migrations/0021-step-starts-folded.js';
import { eventsOfRow } from './history-rows.js';
import { listTaskEvents, type TaskEvent } from './task-events.js';

let fixture: StoreFixture;
let db: Db;
beforeAll(async () => {
  fixture = await createStoreFixture('task_events');
  db = fixture.db;
});
afterAll(async () => {
  await fixture.close();
});

const globex = { tenant: 'globex', principal: 'gina' };

async function history(taskId: string) {
  return (await listTaskEvents(db, taskId)).map(({ kind, actor, data }) => ({ kind, actor, data }));
}

/** What the triggers stored, row by row (not as the history reader gives it back). */
async function storedRows(on: Db, taskId: string) {
  return on
    .selectFrom('task_events')
    .select(['id', 'kind', 'data'])
    .where('task_id', '=', taskId)
    .orderBy('id')
    .execute();
}

/** Moves the task's lease into the past, as if its holder froze. */
async function expireLease(taskId: string): Promise<void> {
  await sql`UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = ${taskId}`.execute(
    db,
  );
}

describe('task_events', () => {
  it('records a task from create to completion in order, in the transactions that made each change', async () => {
    const { task } = await createTask(db, newTask());
    const claim = await claimLease(db, task.id, 'worker-a', 30_000);
    await saveCheckpoint(db, claim!.fence, { step: 1 }, 'step 1 done', { leaseMs: 30_000 });
    await completeTask(db, claim!.fence, { content: [] }, 'done');
    expect(await history(task.id)).toEqual([
      { kind: 'created', actor: null, data: { tool: 'slow_compute', status: 'working' } },
      { kind: 'claimed', actor: null, data: { worker: 'worker-a', epoch: 1, attempt: 1 } },
      { kind: 'step_started', actor: null, data: { step: 1, worker: 'worker-a' } },
      { kind: 'checkpoint', actor: null, data: { step: 1, message: 'step 1 done' } },
      { kind: 'step_started', actor: null, data: { step: 2, worker: 'worker-a' } },
      {
        kind: 'completed',
        actor: null,
        data: { message: 'done', seconds: expect.any(Number) as unknown },
      },
    ]);
    const [settled] = (await history(task.id)).slice(-1);
    expect((settled?.data as { seconds: number }).seconds).toBeGreaterThanOrEqual(0);
  });

  it('stores a step start in the row of the claim or checkpoint it came with, one row per change', async () => {
    const { task } = await createTask(db, newTask());
    const claim = await claimLease(db, task.id, 'worker-a', 30_000);
    await saveCheckpoint(db, claim!.fence, { step: 1 }, 'step 1 done', { leaseMs: 30_000 });
    await renewLease(db, claim!.fence, 30_000);
    await saveCheckpoint(db, claim!.fence, { step: 2 }, 'step 2 done', { leaseMs: 30_000 });
    await completeTask(db, claim!.fence, { content: [] }, 'done');
    const rows = await storedRows(db, task.id);
    expect(rows.map(({ kind, data }) => ({ kind, data }))).toEqual([
      { kind: 'created', data: { tool: 'slow_compute', status: 'working' } },
      { kind: 'claimed', data: { worker: 'worker-a', epoch: 1, attempt: 1, stepStarted: 1 } },
      {
        kind: 'checkpoint',
        data: { step: 1, message: 'step 1 done', worker: 'worker-a', stepStarted: 2 },
      },
      {
        kind: 'checkpoint',
        data: { step: 2, message: 'step 2 done', worker: 'worker-a', stepStarted: 3 },
      },
      { kind: 'completed', data: { message: 'done', seconds: expect.any(Number) as unknown } },
    ]);
    // Read back, each folded row is its two events, both with the row's id.
    const events = await listTaskEvents(db, task.id);
    expect(events.map(({ id, kind }) => [id, kind])).toEqual([
      [rows[0]!.id, 'created'],
      [rows[1]!.id, 'claimed'],
      [rows[1]!.id, 'step_started'],
      [rows[2]!.id, 'checkpoint'],
      [rows[2]!.id, 'step_started'],
      [rows[3]!.id, 'checkpoint'],
      [rows[3]!.id, 'step_started'],
      [rows[4]!.id, 'completed'],
    ]);
    expect(events.filter((event) => event.kind === 'step_started').map((e) => e.data)).toEqual([
      { step: 1, worker: 'worker-a' },
      { step: 2, worker: 'worker-a' },
      { step: 3, worker: 'worker-a' },
    ]);
  });

  it('starts no next step when a cancel is already requested at the checkpoint', async () => {
    const { task } = await createTask(db, newTask());
    const claim = await claimLease(db, task.id, 'worker-a', 30_000);
    await requestCancel(db, alice, task.id);
    await saveCheckpoint(db, claim!.fence, { step: 1 }, 'step 1 done', { leaseMs: 30_000 });
    await releaseLease(db, claim!.fence);
    expect((await history(task.id)).map((event) => event.kind)).toEqual([
      'created',
      'claimed',
      'step_started',
      'cancel_requested',
      'checkpoint',
      'cancelled',
    ]);
  });

  it('writes no event for a lease renewal or a listen flag', async () => {
    const { task } = await createTask(db, newTask());
    const claim = await claimLease(db, task.id, 'worker-a', 30_000);
    const before = (await listTaskEvents(db, task.id)).length;
    for (let i = 0; i < 5; i++) await renewLease(db, claim!.fence, 30_000);
    await flagListenedTasks(db, alice, [task.id]);
    const flagged = await db
      .selectFrom('tasks')
      .select('listened')
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    expect(flagged.listened).toBe(true);
    expect(await listTaskEvents(db, task.id)).toHaveLength(before);
  });

  it('enters no trigger function for a lease renewal or a listen flag (migration 0024)', async () => {
    const { task } = await createTask(db, newTask());
    const claim = await claimLease(db, task.id, 'worker-a', 30_000);
    // The calls of this transaction alone: pg_stat_xact_user_functions, with PL/pgSQL counted.
    const calls = await db.transaction().execute(async (trx) => {
      await sql`SET LOCAL track_functions = 'pl'`.execute(trx);
      await renewLease(trx, claim!.fence, 30_000);
      await flagListenedTasks(trx, alice, [task.id]);
      const counted = await sql<{ name: string; calls: string }>`
        SELECT funcname AS name, calls FROM pg_stat_xact_user_functions
        WHERE funcname LIKE 'task_events_%' ORDER BY funcname`.execute(trx);
      return counted.rows.map((row) => [row.name, Number(row.calls)]);
    });
    expect(calls).toEqual([]);
  });

  it('keeps one BRIN index for the tail and the charts and no CHECK on the hot insert (migration 0024)', async () => {
    const indexes = await sql<{ name: string; definition: string }>`
      SELECT indexname AS name, indexdef AS definition FROM pg_indexes
      WHERE tablename = 'task_events' ORDER BY indexname`.execute(db);
    expect(indexes.rows).toEqual([
      {
        name: 'task_events_by_id_and_time',
        definition:
          'CREATE INDEX task_events_by_id_and_time ON public.task_events USING brin (id, at)',
      },
      {
        name: 'task_events_by_task',
        definition:
          'CREATE INDEX task_events_by_task ON public.task_events USING btree (task_id, id)',
      },
    ]);
    const checks = await sql<{ name: string }>`
      SELECT conname AS name FROM pg_constraint
      WHERE conrelid = 'task_events'::regclass AND contype = 'c'`.execute(db);
    expect(checks.rows).toEqual([]);
  });

  it('records a takeover of a lease its holder never released', async () => {
    const { task } = await createTask(db, newTask());
    await claimLease(db, task.id, 'worker-dead', 30_000);
    await expireLease(task.id);
    await claimLease(db, task.id, 'worker-b', 30_000);
    const kinds = await history(task.id);
    expect(kinds.slice(3)).toEqual([
      {
        kind: 'lease_taken_over',
        actor: null,
        data: expect.objectContaining({
          previousWorker: 'worker-dead',
          previousEpoch: 1,
        }) as unknown,
      },
      { kind: 'claimed', actor: null, data: { worker: 'worker-b', epoch: 2, attempt: 2 } },
      { kind: 'step_started', actor: null, data: { step: 1, worker: 'worker-b' } },
    ]);
  });

  it('records input rounds, answers, a retry, a release and a cancel request', async () => {
    const { task } = await createTask(db, newTask());
    const first = await claimLease(db, task.id, 'worker-a', 30_000);
    await requestInput(db, first!.fence, { name: { method: 'elicitation/create' } }, null, 'who?');
    await recordInputResponses(db, alice, task.id, { name: { action: 'accept', content: {} } });
    const second = await claimLease(db, task.id, 'worker-a', 30_000);
    await recordAttemptFailure(db, second!.fence, 'boom');
    const third = await claimLease(db, task.id, 'worker-a', 30_000);
    await releaseLease(db, third!.fence);
    await claimLease(db, task.id, 'worker-b', 30_000);
    await requestCancel(db, alice, task.id);
    expect((await history(task.id)).map((event) => event.kind)).toEqual([
      'created',
      'claimed',
      'step_started',
      'input_requested',
      'input_answered',
      'resumed',
      'claimed',
      'step_started',
      'attempt_failed',
      'claimed',
      'step_started',
      'lease_released',
      'claimed',
      'step_started',
      'cancel_requested',
    ]);
    const events = await history(task.id);
    expect(events[3]?.data).toEqual({ keys: ['name'], message: 'who?' });
    expect(events[4]?.data).toEqual({ keys: ['name'] });
    expect(events[8]?.data).toEqual({ error: 'boom', failures: 1 });
  });

  it('records an expiry by the sweeper and leaves with its task', async () => {
    const { task } = await createTask(db, newTask({ ttlMs: 0 }));
    await expireTasks(db, new Date(Date.now() + 1_000), { limit: 1_000 });
    expect((await history(task.id)).map((event) => event.kind)).toEqual(['created', 'expired']);
    await deleteExpiredTasks(db, new Date(Date.now() + 10_000), 0, { limit: 1_000 });
    expect(await listTaskEvents(db, task.id)).toEqual([]);
  });
});

describe('reading stored rows as events', () => {
  const row = (kind: string, data: TaskEvent['data'], actor: string | null = null): TaskEvent => ({
    id: '7',
    taskId: 'tsk_x',
    at: new Date(0),
    kind,
    actor,
    data,
  });

  it('gives a row without a step start back as itself', () => {
    for (const one of [
      row('claimed', { worker: 'w', epoch: 2, attempt: 2 }),
      row('checkpoint', { step: 1, message: null }),
      row('completed', { message: 'done', seconds: 1.5 }),
      // Only the triggers fold: an operator's row is never split, whatever its data.
      row('claimed', { stepStarted: 1, worker: 'w' }, 'console:ops'),
      row('created', { stepStarted: 1 }),
    ])
      expect(eventsOfRow(one)).toEqual([one]);
  });

  it('splits a claim or checkpoint carrying a step start into the two events it records', () => {
    expect(
      eventsOfRow(row('claimed', { worker: 'w', epoch: 1, attempt: 1, stepStarted: 4 })),
    ).toEqual([
      row('claimed', { worker: 'w', epoch: 1, attempt: 1 }),
      row('step_started', { step: 4, worker: 'w' }),
    ]);
    expect(
      eventsOfRow(row('checkpoint', { step: 3, message: 'm', worker: 'w', stepStarted: 4 })),
    ).toEqual([
      row('checkpoint', { step: 3, message: 'm' }),
      row('step_started', { step: 4, worker: 'w' }),
    ]);
  });
});

async function updateTriggerHasWhen(on: Db): Promise<boolean> {
  const { rows } = await sql<{ definition: string }>`
    SELECT pg_get_triggerdef(oid) AS definition FROM pg_trigger
    WHERE tgrelid = 'tasks'::regclass AND tgname = 'task_events_on_update'
  `.execute(on);
  return / WHEN /.test(rows[0]?.definition ?? '');
}

describe('migration 0021', () => {
  it('goes down to a row per step start and the WHEN, and up again to folded rows and none', async () => {
    const own = await createStoreFixture('task_events_0021');
    try {
      const kindsOfLifecycle = async () => {
        const { task } = await createTask(own.db, newTask());
        const claim = await claimLease(own.db, task.id, 'worker-a', 30_000);
        await saveCheckpoint(own.db, claim!.fence, { step: 1 }, 'one', { leaseMs: 30_000 });
        return (await storedRows(own.db, task.id)).map((stored) => stored.kind);
      };
      await stepStartsFolded.down!(own.db);
      expect(await kindsOfLifecycle()).toEqual([
        'created',
        'claimed',
        'step_started',
        'checkpoint',
        'step_started',
      ]);
      expect(await updateTriggerHasWhen(own.db)).toBe(true);
      await stepStartsFolded.up(own.db);
      expect(await kindsOfLifecycle()).toEqual(['created', 'claimed', 'checkpoint']);
      expect(await updateTriggerHasWhen(own.db)).toBe(false);
    } finally {
      await own.close();
    }
  });
});

describe('operator actions', () => {
  it('cancels within the operator tenant only, each task audited with who did it', async () => {
    const mine = await createTask(
      db,
      newTask({ operation: { method: 'tools/call', toolName: 'bulk_tool', arguments: {} } }),
    );
    const theirs = await createTask(
      db,
      newTask({
        owner: globex,
        operation: { method: 'tools/call', toolName: 'bulk_tool', arguments: {} },
      }),
    );
    const scope = { tenant: 'acme' };
    const filter = { tool: 'bulk_tool' };
    expect(await countTasksForOperator(db, scope, { ...filter, statuses: ['working'] })).toBe(1);
    const cancelled = await cancelTasksForOperator(db, scope, { filter }, 'console:ops');
    expect(cancelled).toEqual([mine.task.id]);
    expect((await history(mine.task.id)).slice(1)).toEqual([
      { kind: 'cancel_requested', actor: null, data: {} },
      {
        kind: 'cancelled',
        actor: null,
        data: { message: 'cancelled by request', seconds: expect.any(Number) as unknown },
      },
      {
        kind: 'console_cancel',
        actor: 'console:ops',
        data: { bulk: true, cancelledDirectly: true },
      },
    ]);
    expect((await history(theirs.task.id)).map((event) => event.kind)).toEqual(['created']);
    expect(
      await cancelTasksForOperator(db, scope, { taskIds: [theirs.task.id] }, 'console:ops'),
    ).toEqual([]);
  });

  it('answers an outstanding input for its owner and audits it; another tenant finds nothing', async () => {
    const { task } = await createTask(db, newTask());
    const claim = await claimLease(db, task.id, 'worker-a', 30_000);
    await requestInput(db, claim!.fence, { ok: { method: 'elicitation/create' } }, null, 'ok?');
    const answer = { ok: { action: 'accept', content: { fine: true } } };
    expect(
      await answerInputForOperator(db, { tenant: 'globex' }, task.id, answer, 'console:x'),
    ).toEqual({
      found: false,
      answered: [],
      resumed: false,
    });
    expect(
      await answerInputForOperator(db, { tenant: null }, task.id, answer, 'console:root'),
    ).toEqual({
      found: true,
      answered: ['ok'],
      resumed: true,
    });
    expect((await history(task.id)).slice(-3)).toEqual([
      { kind: 'input_answered', actor: null, data: { keys: ['ok'] } },
      { kind: 'resumed', actor: null, data: { message: 'All input received; resuming' } },
      { kind: 'console_answer', actor: 'console:root', data: { keys: ['ok'] } },
    ]);
  });

  it('pages through tasks created within one millisecond without losing one (the cursor keeps microseconds)', async () => {
    const tool = 'same_millisecond_tool';
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (
          await createTask(
            db,
            newTask({ operation: { method: 'tools/call', toolName: tool, arguments: {} } }),
          )
        ).task.id,
      );
    // Three creates 100 µs apart in one millisecond (created_at is immutable to the app's writes).
    await db.transaction().execute(async (trx) => {
      await sql`SET LOCAL session_replication_role = replica`.execute(trx);
      for (const [i, id] of ids.entries())
        await sql`UPDATE tasks SET created_at = ${`2026-01-01T00:00:00.1234${i}Z`}::timestamptz WHERE id = ${id}`.execute(
          trx,
        );
    });
    const seen: string[] = [];
    let cursor: Parameters<typeof listTasksForOperator>[3]['cursor'];
    for (let i = 0; i < 5; i++) {
      const page = await listTasksForOperator(
        db,
        { tenant: 'acme' },
        { tool },
        { limit: 1, ...(cursor === undefined ? {} : { cursor }) },
      );
      seen.push(...page.rows.map((row) => row.id));
      if (page.next === undefined) break;
      cursor = page.next;
      expect(cursor.createdAt).toMatch(/^2026-01-01T00:00:00\.1234\d0Z$/);
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('pages newest first by (created_at, id) and searches arguments', async () => {
    const tool = 'paged_tool';
    const created = [];
    for (let i = 0; i < 5; i++)
      created.push(
        (
          await createTask(
            db,
            newTask({
              operation: {
                method: 'tools/call',
                toolName: tool,
                arguments: { city: i === 2 ? 'Zürich_%' : 'Oslo' },
              },
            }),
          )
        ).task.id,
      );
    const first = await listTasksForOperator(db, { tenant: 'acme' }, { tool }, { limit: 3 });
    const second = await listTasksForOperator(
      db,
      { tenant: 'acme' },
      { tool },
      { cursor: first.next!, limit: 3 },
    );
    expect([...first.rows, ...second.rows].map((row) => row.id)).toEqual([...created].reverse());
    expect(second.next).toBeUndefined();
    const found = await listTasksForOperator(
      db,
      { tenant: 'acme' },
      { tool, search: 'zürich_%' },
      { limit: 10 },
    );
    expect(found.rows.map((row) => row.id)).toEqual([created[2]]);
    expect(
      (await listTasksForOperator(db, { tenant: 'globex' }, { tool }, { limit: 10 })).rows,
    ).toEqual([]);
  });

  it('bounds a search to a number of rows a page and goes on from the last one examined', async () => {
    const tool = 'bounded_search_tool';
    const created: string[] = [];
    for (let i = 0; i < 9; i++)
      created.push(
        (
          await createTask(
            db,
            newTask({
              owner: { tenant: 'bounded', principal: 'b' },
              operation: {
                method: 'tools/call',
                toolName: tool,
                arguments: { note: i % 4 === 0 ? 'needle' : 'hay' },
              },
            }),
          )
        ).task.id,
      );
    // Newest first: 8 (needle), 7, 6, 5, 4 (needle), 3, 2, 1, 0 (needle); 3 rows examined a page.
    const scope = { tenant: 'bounded' };
    const filter = { tool, search: 'needle' };
    const pages: { ids: string[]; cut: boolean | undefined }[] = [];
    let cursor: Parameters<typeof listTasksForOperator>[3]['cursor'];
    for (let i = 0; i < 5; i++) {
      const page = await listTasksForOperator(db, scope, filter, {
        limit: 10,
        searchScanRows: 3,
        ...(cursor === undefined ? {} : { cursor }),
      });
      pages.push({ ids: page.rows.map((row) => row.id), cut: page.searchCut });
      if (page.next === undefined) break;
      cursor = page.next;
    }
    expect(pages).toEqual([
      { ids: [created[8]], cut: true },
      { ids: [created[4]], cut: true },
      { ids: [created[0]], cut: true },
      { ids: [], cut: undefined },
    ]);
    // A full page of matches within the rows examined pages like any list.
    const full = await listTasksForOperator(
      db,
      scope,
      { tool, search: 'hay' },
      {
        limit: 2,
        searchScanRows: 3,
      },
    );
    expect(full.rows.map((row) => row.id)).toEqual([created[7], created[6]]);
    expect(full.searchCut).toBeUndefined();
    expect(full.next?.id).toBe(created[6]);
    expect(new Date(full.next!.createdAt).getTime()).toBe(full.rows[1]!.createdAt.getTime());
  });
});
