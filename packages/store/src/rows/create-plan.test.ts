import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@mcp-tasks/testing';
import { newTask, sleep } from '../../test/helpers.js';
import { createDb, type Db } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { createTask } from './task-repository.js';

/**
 * A connection caches the create statement's plan, and one planned while the table was nearly
 * empty (a fresh deployment: no ANALYZE yet) reads `tasks` by a sequential scan. The create must
 * not run that read unless some input already existed. Postgres's own counters tell: this file's
 * database has one connection, forced onto the generic plan at once.
 */
let database: TestDatabase;
let db: Db;
beforeAll(async () => {
  database = await createTestDatabase('create_plan');
  const migrator = createDb({ connectionString: database.connectionString, max: 1 });
  await migrateToLatest(migrator);
  // A closing backend reports its counters (the index builds' scans) before it goes.
  await migrator.destroy();
  const url = new URL(database.connectionString);
  url.searchParams.set('options', '-c plan_cache_mode=force_generic_plan');
  db = createDb({ connectionString: url.toString(), max: 1 });
  await waitUntilOnlyOneBackendIsLeft();
});
afterAll(async () => {
  await db.destroy();
  await database.drop();
});

async function waitUntilOnlyOneBackendIsLeft(): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()`.execute(
      db,
    );
    if (rows[0]!.n === 1) return;
    await sleep(50);
  }
}

/** Sequential scans of `tasks` so far, this connection's pending counts included. */
async function tableScans(): Promise<number> {
  await sql`SELECT pg_stat_force_next_flush()`.execute(db);
  await sql`SELECT pg_stat_clear_snapshot()`.execute(db);
  const { rows } = await sql<{ seq_scan: string }>`
    SELECT seq_scan FROM pg_stat_user_tables WHERE relname = 'tasks'`.execute(db);
  return Number(rows[0]!.seq_scan);
}

it('a create of a new id reads no existing rows, even under a plan made on an empty table', async () => {
  const before = await tableScans();
  for (let i = 0; i < 5; i += 1) await createTask(db, newTask());
  expect(await tableScans()).toBe(before);

  // A repeat still reads the existing row in the same statement (and may scan to find it).
  const input = newTask();
  await createTask(db, input);
  const repeat = await createTask(db, input);
  expect(repeat.created).toBe(false);
  expect(repeat.task.id).toBe(input.id);
});
