import { setTimeout as sleep } from 'node:timers/promises';
import { Migrator, sql, type Kysely } from 'kysely';
import type { Database, Db } from './database.js';
import { SchemaMissingError, SchemaTooNewError } from '../errors.js';
import { MIGRATIONS, isTransactional, migrationProvider } from '../migrations/index.js';

export const MIGRATION_TABLE = 'kysely_migration';

/**
 * Our own session lock, held on one connection around the whole run. Kysely's Postgres adapter
 * also locks, but only around each Migrator run; its table-creation steps run before that lock.
 * Holding ours first makes two deploys starting at once strictly one-after-the-other.
 */
const MIGRATION_LOCK_KEY = 'mcp-tasks:migrations';
/** How often a second migrator retries the lock (see waitForMigrationLock). */
const LOCK_RETRY_MS = 250;

/**
 * Applies every pending migration under a session advisory lock, so concurrent migrators wait
 * instead of racing. Each migration commits on its own (kysely would run them all in one
 * transaction, holding every table lock until the last commits): a transactional one together
 * with its record, a non-transactional one (online.ts) as its own short transactions and
 * concurrent index builds, recorded after. No lock_timeout: a migration that needs a table lock
 * waits for the transactions holding one (and queries arriving meanwhile queue behind it), so run
 * it when no long transaction is open. Give it a pool without statement timeouts
 * (`statementTimeoutMs: 0`): waiting for another migrator and building an index take time.
 */
export async function migrateToLatest(db: Db): Promise<{ applied: string[] }> {
  return migrateUpTo(db, undefined);
}

/**
 * Applies the pending migrations up to and including `target`, the same way migrateToLatest
 * does (tests and the migration lock probe stop a database at an older schema with it).
 */
export async function migrateTo(db: Db, target: string): Promise<{ applied: string[] }> {
  if (!(target in MIGRATIONS)) throw new Error(`unknown migration ${target}`);
  return migrateUpTo(db, target);
}

async function migrateUpTo(db: Db, target: string | undefined): Promise<{ applied: string[] }> {
  return db.connection().execute(async (connection) => {
    await waitForMigrationLock(connection);
    try {
      const applied = (await appliedMigrations(connection)) ?? [];
      // A newer build owns this schema: refuse instead of running anything against it.
      const unknown = applied.filter((name) => !(name in MIGRATIONS));
      if (unknown.length > 0) throw new SchemaTooNewError(unknown);
      const pending = Object.keys(MIGRATIONS)
        .sort()
        .filter((name) => !applied.includes(name) && (target === undefined || name <= target));
      for (const name of pending) await applyOne(connection, name);
      return { applied: pending };
    } finally {
      await sql`SELECT pg_advisory_unlock(hashtextextended(${MIGRATION_LOCK_KEY}, 0))`.execute(
        connection,
      );
    }
  });
}

/**
 * Polls instead of blocking in pg_advisory_lock: a session blocked in a statement holds a
 * snapshot, and CREATE INDEX CONCURRENTLY waits for every older snapshot to end, so a waiting
 * migrator would deadlock with the one building an index.
 */
async function waitForMigrationLock(connection: Kysely<Database>): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ locked: boolean }>`
      SELECT pg_try_advisory_lock(hashtextextended(${MIGRATION_LOCK_KEY}, 0)) AS locked
    `.execute(connection);
    if (rows[0]?.locked === true) return;
    await sleep(LOCK_RETRY_MS);
  }
}

/** One migration through kysely's Migrator, in a transaction of its own unless it opts out. */
async function applyOne(connection: Kysely<Database>, name: string): Promise<void> {
  const migrator = new Migrator({
    db: connection,
    provider: migrationProvider,
    disableTransactions: !isTransactional(MIGRATIONS[name]!),
  });
  const { error } = await migrator.migrateTo(name);
  if (error !== undefined) {
    const reason = error instanceof Error ? error.message : JSON.stringify(error);
    throw new Error(`migration ${name} failed: ${reason}`, { cause: error });
  }
}

/**
 * Refuses to run against a schema this build does not match (Graphile Worker style): migrations it
 * does not know mean a newer release owns the schema; missing ones mean nobody ran `db:migrate`.
 */
export async function assertSchemaCompatible(db: Db): Promise<void> {
  const known = Object.keys(MIGRATIONS).sort();
  const applied = await appliedMigrations(db);
  if (applied === undefined) throw new SchemaMissingError(known);
  const appliedNames = new Set(applied);
  const unknown = [...appliedNames].filter((name) => !(name in MIGRATIONS));
  if (unknown.length > 0) throw new SchemaTooNewError(unknown);
  const pending = known.filter((name) => !appliedNames.has(name));
  if (pending.length > 0) throw new SchemaMissingError(pending);
}

/** Names recorded in the migration table, or undefined when there is no such table yet. */
async function appliedMigrations(db: Kysely<Database>): Promise<string[] | undefined> {
  const table = await sql<{ exists: boolean }>`
    SELECT to_regclass(${MIGRATION_TABLE}) IS NOT NULL AS exists
  `.execute(db);
  if (table.rows[0]?.exists !== true) return undefined;
  const rows = await sql<{ name: string }>`
    SELECT name FROM ${sql.table(MIGRATION_TABLE)} ORDER BY name
  `.execute(db);
  return rows.rows.map((row) => row.name);
}
