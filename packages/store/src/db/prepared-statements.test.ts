import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alice, createStoreFixture, newTask, type StoreFixture } from '../../test/helpers.js';
import { createDb, type Db } from './database.js';
import { executePrepared } from './prepared-statements.js';
import {
  createTask,
  recordInputResponses,
  recordManyInputResponses,
} from '../rows/task-repository.js';
import { getTaskViewForPrincipal } from '../service/task-view.js';

let fixture: StoreFixture;
/** One connection, so the session that prepared a statement is the one asked about it. */
let single: Db;

beforeAll(async () => {
  fixture = await createStoreFixture('prepared_statements');
  single = createDb({ connectionString: fixture.database.connectionString, max: 1 });
});
afterAll(async () => {
  await single.destroy();
  await fixture.close();
});

async function preparedInSession(db: Db): Promise<Map<string, string>> {
  const { rows } = await sql<{
    name: string;
    statement: string;
  }>`SELECT name, statement FROM pg_prepared_statements`.execute(db);
  return new Map(rows.map((row) => [row.name, row.statement]));
}

describe('executePrepared', () => {
  it('runs the hot statements as named statements of the session, once parsed', async () => {
    const { task } = await createTask(single, newTask());
    for (let i = 0; i < 3; i += 1) {
      const view = await getTaskViewForPrincipal(single, alice.tenant, alice.principal, task.id);
      expect(view?.id).toBe(task.id);
    }
    // tasks/update's writes, alone and shared.
    await recordInputResponses(single, alice, task.id, { a: {} });
    await recordManyInputResponses(single, [{ owner: alice, taskId: task.id, responses: {} }]);
    const prepared = await preparedInSession(single);
    expect(prepared.get('insert_tasks')).toContain('INSERT INTO tasks');
    expect(prepared.get('task_view')).toMatch(/^SELECT id, status, .* FROM tasks WHERE id = \$1/);
    expect(prepared.get('record_input_responses')).toMatch(/FOR UPDATE/);
    expect(prepared.get('record_many_input_responses')).toMatch(/unnest/);
    // A query nobody named stays unnamed.
    expect([...prepared.keys()].sort()).toEqual([
      'insert_tasks',
      'record_input_responses',
      'record_many_input_responses',
      'task_view',
    ]);
  });

  it('reads a view through Kysely, as the same named statement, when the Db has a query log', async () => {
    const logged: string[] = [];
    const db = createDb({
      connectionString: fixture.database.connectionString,
      max: 1,
      log: (event) => {
        logged.push(event.query.sql);
      },
    });
    try {
      const { task } = await createTask(single, newTask());
      const view = await getTaskViewForPrincipal(db, alice.tenant, alice.principal, task.id);
      expect(view?.id).toBe(task.id);
      expect(logged).toEqual([expect.stringMatching(/^SELECT id, status, .* FROM tasks WHERE id/)]);
      expect((await preparedInSession(db)).has('task_view')).toBe(true);
    } finally {
      await db.destroy();
    }
  });

  it('gives a second text under the same name a name of its own', async () => {
    const first = CompiledQuery.raw('SELECT 1 AS one', []);
    const second = CompiledQuery.raw('SELECT 2 AS one', []);
    expect((await executePrepared(single, 'variant_probe', first)).rows).toEqual([{ one: 1 }]);
    expect((await executePrepared(single, 'variant_probe', second)).rows).toEqual([{ one: 2 }]);
    const prepared = await preparedInSession(single);
    expect(prepared.get('variant_probe')).toBe('SELECT 1 AS one');
    expect(prepared.get('variant_probe_2')).toBe('SELECT 2 AS one');
  });

  it('refuses a statement that selects or returns *, before it reaches the database', async () => {
    for (const text of [
      'SELECT * FROM tasks WHERE id = $1',
      'UPDATE tasks SET status = $1 RETURNING *',
      'SELECT t.* FROM tasks t',
    ]) {
      await expect(
        executePrepared(single, 'star_probe', CompiledQuery.raw(text, ['x'])),
      ).rejects.toThrow(/star_probe selects or returns \*: name the columns/);
    }
    expect((await preparedInSession(single)).has('star_probe')).toBe(false);
  });

  it('keeps working on connections that prepared before a migration added a column', async () => {
    const { task } = await createTask(fixture.db, newTask());
    // Every pooled connection prepares both statements before the schema changes.
    await Promise.all(
      Array.from({ length: 20 }, () =>
        getTaskViewForPrincipal(fixture.db, alice.tenant, alice.principal, task.id),
      ),
    );
    await sql`ALTER TABLE tasks ADD COLUMN added_by_a_later_migration integer`.execute(fixture.db);
    const views = await Promise.all(
      Array.from({ length: 20 }, () =>
        getTaskViewForPrincipal(fixture.db, alice.tenant, alice.principal, task.id),
      ),
    );
    expect(views.every((view) => view?.id === task.id)).toBe(true);
    const created = await Promise.all(
      Array.from({ length: 20 }, () => createTask(fixture.db, newTask())),
    );
    expect(created.every((outcome) => outcome.created)).toBe(true);
  });
});
