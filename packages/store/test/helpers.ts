import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '@mcp-tasks/testing';
import { newTaskId, type TaskOwner } from '@mcp-tasks/tasks';
import { createDb, type Db, type TaskRow } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { NewTask } from '../src/rows/task-repository.js';

export interface StoreFixture {
  database: TestDatabase;
  db: Db;
  close(): Promise<void>;
}

/** A migrated database of this file's own, with a pool wide enough for the concurrency tests. */
export async function createStoreFixture(label: string): Promise<StoreFixture> {
  const database = await createTestDatabase(label);
  const db = createDb({ connectionString: database.connectionString, max: 20 });
  await migrateToLatest(db);
  return {
    database,
    db,
    async close() {
      await db.destroy();
      await database.drop();
    },
  };
}

export const alice: TaskOwner = { tenant: 'acme', principal: 'alice' };

export function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return {
    id: newTaskId(),
    owner: alice,
    operation: { method: 'tools/call', toolName: 'slow_compute', arguments: { seconds: 1 } },
    ttlMs: 60_000,
    pollIntervalMs: 500,
    statusMessage: null,
    ...overrides,
  };
}

/** The raw row, to prove a losing write changed nothing at all (not just the mapped fields). */
export async function rawRow(db: Db, taskId: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirst();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** How many of this database's backends carry `applicationName` (a backend leaves at its exit). */
export async function backendsNamed(db: Db, applicationName: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = ${applicationName}
  `.execute(db);
  return rows[0]!.n;
}

/** Kills this database's backends with the given application_name: a dropped connection, on demand. */
export async function terminateConnections(db: Db, applicationName: string): Promise<number> {
  const result = await sql<{ terminated: boolean }>`
    SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
    WHERE application_name = ${applicationName} AND datname = current_database()
      AND pid <> pg_backend_pid()
  `.execute(db);
  return result.rows.filter((row) => row.terminated).length;
}
