import { Migrator, sql, type Kysely } from 'kysely';
import type { Database, Db } from './database.js';
import { SchemaMissingError, SchemaTooNewError } from '../errors.js';
import { MIGRATIONS, migrationProvider } from '../migrations/index.js';

export const MIGRATION_TABLE = 'kysely_migration';

/**
 * Our own session lock, held on one connection around the whole Migrator run. Kysely's Postgres
 * adapter also locks, but only around applying migrations; its table-creation steps run before
 * that lock. Holding ours first makes two deploys starting at once strictly one-after-the-other.
 */
const MIGRATION_LOCK_KEY = 'mcp-tasks:migrations';

/**
 * Applies every pending migration under a session advisory lock, so concurrent migrators wait
 * instead of racing. Give it a pool without statement timeouts (`statementTimeoutMs: 0`): waiting
 * for another migrator's lock and building an index are legitimately long.
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
    await sql`SELECT pg_advisory_lock(hashtextextended(${MIGRATION_LOCK_KEY}, 0))`.execute(
      connection,
    );
    try {
      // A newer build owns this schema: refuse instead of running anything against it.
      const applied = (await appliedMigrations(connection)) ?? [];
      const unknown = applied.filter((name) => !(name in MIGRATIONS));
      if (unknown.length > 0) throw new SchemaTooNewError(unknown);
      // Forward only: kysely's migrateTo would undo the migrations after an applied target.
      if (target !== undefined && applied.includes(target)) return { applied: [] };
      const migrator = new Migrator({ db: connection, provider: migrationProvider });
      const { error, results = [] } =
        target === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(target);
      if (error !== undefined) {
        const failed = results.find((result) => result.status === 'Error');
        const reason = error instanceof Error ? error.message : JSON.stringify(error);
        throw new Error(`migration ${failed?.migrationName ?? '(setup)'} failed: ${reason}`, {
          cause: error,
        });
      }
      return { applied: results.filter((r) => r.status === 'Success').map((r) => r.migrationName) };
    } finally {
      await sql`SELECT pg_advisory_unlock(hashtextextended(${MIGRATION_LOCK_KEY}, 0))`.execute(
        connection,
      );
    }
  });
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
