import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newTaskId, type TaskOwner } from '@mcp-tasks/tasks';
import { createStoreFixture, newTask, type StoreFixture } from '../../test/helpers.js';
import type { Db } from '../db/database.js';
import { claimFairly, claimLease, releaseLease } from '../lease/lease.js';
import { createTask } from './task-repository.js';

let fixture: StoreFixture;
let db: Db;
beforeAll(async () => {
  fixture = await createStoreFixture('fair_queue');
  db = fixture.db;
});
afterAll(async () => {
  await fixture.close();
});
// The fair queue is the whole table's: each case starts from an empty one.
beforeEach(async () => {
  await sql`DELETE FROM tasks`.execute(db);
});

const heavy: TaskOwner = { tenant: 'heavy', principal: 'bulk' };
const light: TaskOwner = { tenant: 'light', principal: 'one' };

async function queue(owner: TaskOwner, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push((await createTask(db, newTask({ owner }))).task.id);
  return ids;
}

async function rounds(): Promise<Record<string, number>> {
  const rows = await sql<{ id: string; fair_round: string }>`
    SELECT id, fair_round FROM tasks`.execute(db);
  return Object.fromEntries(rows.rows.map((row) => [row.id, Number(row.fair_round)]));
}

const claim = async (wakeUps: string[]) =>
  (await claimFairly(db, wakeUps, 'worker-f', 30_000)).map((won) => won?.task.id ?? null);

describe('fair rounds, given when a task is inserted', () => {
  it("spreads one tenant's batch over consecutive rounds and starts a newcomer in the round now served", async () => {
    const bulk = await queue(heavy, 4);
    const [first] = await queue(light, 1);
    expect(await rounds()).toEqual({
      [bulk[0]!]: 0,
      [bulk[1]!]: 1,
      [bulk[2]!]: 2,
      [bulk[3]!]: 3,
      [first!]: 0,
    });
    // Two rounds served: the newcomer now starts in round 2, not behind the heavy line.
    await claim([bulk[0]!, first!]);
    await claim([bulk[1]!]);
    const [later] = await queue(light, 1);
    expect((await rounds())[later!]).toBe(2);
  });

  it('spreads the rows of one multi-row INSERT over consecutive rounds, whichever build inserts', async () => {
    const ids = [newTaskId(), newTaskId(), newTaskId()];
    await sql`
      INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments)
      SELECT id, 'heavy', 'bulk', 'tools/call', 'slow_compute', '{}'::jsonb
      FROM unnest(${ids}::text[]) AS id`.execute(db);
    const given = await rounds();
    expect(ids.map((id) => given[id]).sort()).toEqual([0, 1, 2]);
  });
});

describe('claimFairly', () => {
  it("takes another tenant's waiting task before a wake-up's own task of a later round", async () => {
    const bulk = await queue(heavy, 5);
    const [single] = await queue(light, 1);
    // The wake-ups arrive first in, first out: all of heavy's, then light's.
    expect(await claim([bulk[0]!])).toEqual([bulk[0]]);
    expect(await claim([bulk[1]!])).toEqual([single]);
    expect(await claim([bulk[2]!])).toEqual([bulk[1]]);
  });

  it('claims round by round across tenants, whatever order the wake-ups name the tasks in', async () => {
    const bulk = await queue(heavy, 3);
    const few = await queue(light, 2);
    const order: (string | null)[] = [];
    for (const wakeUp of [...bulk, ...few]) order.push(...(await claim([wakeUp])));
    expect(order).toEqual([bulk[0], few[0], bulk[1], few[1], bulk[2]]);
  });

  it('hands a batch of wake-ups the fairest tasks, each wake-up its own task where it won', async () => {
    const bulk = await queue(heavy, 4);
    const [single] = await queue(light, 1);
    // Rounds 0, 0 and 1 are served; bulk[2] (round 2) waits, its wake-up took light's task.
    expect(await claim([bulk[0]!, bulk[1]!, bulk[2]!])).toEqual([bulk[0], bulk[1], single]);
  });

  it('lets a wake-up whose task is gone or held take the fairest waiting task', async () => {
    const bulk = await queue(heavy, 2);
    await claimLease(db, bulk[0]!, 'worker-other', 30_000);
    expect(await claim([bulk[0]!, newTaskId(), 'not-a-task-id'])).toEqual([bulk[1], null, null]);
  });

  it('keeps a claimed-before task on its own wake-up (its delay stands), whoever waits', async () => {
    const [retried] = await queue(heavy, 1);
    const first = await claimLease(db, retried!, 'worker-other', 30_000);
    await releaseLease(db, first!.fence);
    const [waiting] = await queue(light, 1);
    expect(await claim([retried!])).toEqual([retried]);
    expect(await claim([newTaskId()])).toEqual([waiting]);
  });

  it('waits for a claimed-before task another transaction is writing, as a claim by id does', async () => {
    const [resumed] = await queue(heavy, 1);
    const first = await claimLease(db, resumed!, 'worker-other', 30_000);
    await releaseLease(db, first!.fence);
    const { claiming } = await db.transaction().execute(async (trx) => {
      await sql`UPDATE tasks SET enqueued_at = now() WHERE id = ${resumed}`.execute(trx);
      // Sent while the row is locked; it can only answer once this transaction commits.
      const pending = claim([resumed!]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { claiming: pending };
    });
    expect(await claiming).toEqual([resumed]);
  });

  it('skips a waiting task another transaction is claiming instead of waiting for it', async () => {
    const [locked, next] = await queue(heavy, 2);
    await db.transaction().execute(async (trx) => {
      await sql`SELECT id FROM tasks WHERE id = ${locked} FOR UPDATE`.execute(trx);
      expect(await claim([locked!])).toEqual([next]);
    });
    expect(await claim([newTaskId()])).toEqual([locked]);
  });
});
