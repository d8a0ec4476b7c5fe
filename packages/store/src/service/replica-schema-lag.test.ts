import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@mcp-tasks/testing';
import { alice, createStoreFixture, newTask, type StoreFixture } from '../../test/helpers.js';
import { createDb, type Db } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import type { WakeUpQueue } from '../wake-up/outbox.js';
import { createTasks } from '../rows/task-repository.js';
import { createTaskService } from './task-service.js';

/**
 * A replica that has not replayed the latest migration yet (a fresh deployment, or a replica
 * behind a reader endpoint that replays late) answers a read with "relation does not exist" or
 * "column does not exist". tasks/get for a handle the client holds must still find the task on
 * the primary, as for a replica that has not replayed the row (ADR 0007), never fail with a bug's
 * "Internal error". Each replica here is a database of its own whose schema lags the primary's.
 */
let primary: StoreFixture;
const lagging: { database: TestDatabase; db: Db }[] = [];
const wakeUpQueue: WakeUpQueue = { wake: () => Promise.resolve() };

async function laggingReplica(label: string, prepare: (db: Db) => Promise<void>): Promise<Db> {
  const database = await createTestDatabase(label);
  const db = createDb({ connectionString: database.connectionString, max: 2 });
  lagging.push({ database, db });
  await prepare(db);
  return db;
}

beforeAll(async () => {
  primary = await createStoreFixture('replica_schema_primary');
});
afterAll(async () => {
  for (const { database, db } of lagging) {
    await db.destroy();
    await database.drop();
  }
  await primary.close();
});

describe('tasks/get on a replica whose schema lags the primary', () => {
  it('finds the task on the primary when the replica has no tasks table yet', async () => {
    const readDb = await laggingReplica('replica_schema_no_table', () => Promise.resolve());
    const service = createTaskService({ db: primary.db, readDb, wakeUpQueue });
    const input = newTask({ statusMessage: 'on the primary only' });
    await createTasks(primary.db, [input]);
    const view = await service.getTaskView(alice, input.id);
    expect(view).toMatchObject({ id: input.id, statusMessage: 'on the primary only' });
  });

  it('finds the task on the primary when the replica lacks a column the read selects', async () => {
    const readDb = await laggingReplica('replica_schema_no_column', async (db) => {
      await migrateToLatest(db);
      await sql`ALTER TABLE tasks DROP COLUMN status_message CASCADE`.execute(db);
    });
    const service = createTaskService({ db: primary.db, readDb, wakeUpQueue });
    const inputs = [newTask({ statusMessage: 'a' }), newTask({ statusMessage: 'b' })];
    await createTasks(primary.db, inputs);
    // Asked together, the two share one read on the replica (natural batching) and both fall back.
    const views = await Promise.all(inputs.map((input) => service.getTaskView(alice, input.id)));
    expect(views.map((view) => [view?.id, view?.statusMessage])).toEqual([
      [inputs[0]!.id, 'a'],
      [inputs[1]!.id, 'b'],
    ]);
  });

  it('still fails a read that went wrong for any other reason: a bug is not hidden', async () => {
    const readDb = await laggingReplica('replica_schema_other', async (db) => {
      await migrateToLatest(db);
      // Every read of tasks on this replica divides by zero (22012): not a lagging schema.
      await sql`ALTER TABLE tasks RENAME TO tasks_replayed`.execute(db);
      await sql`CREATE VIEW tasks AS SELECT * FROM tasks_replayed WHERE (SELECT 1 / 0) = 1`.execute(
        db,
      );
    });
    const service = createTaskService({ db: primary.db, readDb, wakeUpQueue });
    const input = newTask();
    await createTasks(primary.db, [input]);
    await expect(service.getTaskView(alice, input.id)).rejects.toMatchObject({ code: '22012' });
  });
});
