import { CompiledQuery, sql, type Kysely, type Migration, type RawBuilder } from 'kysely';
import { lockInIdOrder } from '../sql/row-locks.js';

/**
 * A migration step that must not run inside a transaction: migrate.ts runs it on a plain
 * connection and records it only after `up` returns. Such a migration takes its short locks in
 * transactions of its own (inTransaction) and builds indexes with CREATE INDEX CONCURRENTLY, so
 * writes to a big table go on while it runs. Every step must be safe to repeat: a crash between
 * two steps reruns the whole `up` on the next deploy.
 */
export type StoreMigration = Migration & { readonly transactional?: false };

/** Whether migrate.ts wraps the migration (and its record) in one transaction. */
export const isTransactional = (migration: StoreMigration): boolean =>
  migration.transactional !== false;

/** Short DDL of an online migration, committed at once so its table lock is released. */
export async function inTransaction(
  db: Kysely<unknown>,
  run: (trx: Kysely<unknown>) => Promise<void>,
): Promise<void> {
  await db.transaction().execute(run);
}

/**
 * Builds an index while writes go on (reads and writes wait only for a moment at the start and
 * end of each of its phases). A build that died half way (a crash, a cancelled deploy) leaves an
 * INVALID index under this name, which IF NOT EXISTS would keep: it is dropped first, so a rerun
 * completes. Waits for every transaction already open in the database to end.
 */
export async function createIndexConcurrently(
  db: Kysely<unknown>,
  name: string,
  definition: RawBuilder<unknown>,
): Promise<void> {
  const leftover = await sql<{ valid: boolean }>`
    SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass(${name}::text)
  `.execute(db);
  if (leftover.rows[0]?.valid === false)
    await sql`DROP INDEX CONCURRENTLY ${sql.id(name)}`.execute(db);
  await sql`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${sql.id(name)} ${definition}`.execute(db);
}

/** Drops an index without the exclusive table lock a plain DROP INDEX waits for and holds. */
export async function dropIndexConcurrently(db: Kysely<unknown>, name: string): Promise<void> {
  await sql`DROP INDEX CONCURRENTLY IF EXISTS ${sql.id(name)}`.execute(db);
}

/**
 * Checks a CHECK constraint added NOT VALID against the rows already there. VALIDATE reads the
 * whole table under SHARE UPDATE EXCLUSIVE, which lets reads and writes go on (an ADD CONSTRAINT
 * that validates at once reads it under ACCESS EXCLUSIVE). Validating a valid one is a no-op.
 */
export async function validateConstraint(
  db: Kysely<unknown>,
  table: string,
  name: string,
): Promise<void> {
  await sql`ALTER TABLE ${sql.table(table)} VALIDATE CONSTRAINT ${sql.id(name)}`.execute(db);
}

/** Whether `table` has a constraint called `name` (steps that add one run once). */
export async function hasConstraint(
  db: Kysely<unknown>,
  table: string,
  name: string,
): Promise<boolean> {
  const found = await sql`
    SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass(${table}::text) AND conname = ${name}
  `.execute(db);
  return found.rows.length > 0;
}

/** A backfill batch's task rows ($1, ids), locked in id order (updateInBatches). */
const LOCK_BATCH = lockInIdOrder({ where: 't.id = ANY($1::text[])' });

/**
 * Updates the task rows `select` finds (ids, read without locking anything) `batchSize` at a
 * time, each batch its own short transaction: a row lock lasts one batch, not one scan of a big
 * table. `update` gets the batch's ids and must re-check its own condition (a row may have moved
 * on). The batch's rows are locked in id order first, as every statement of the running service
 * that waits for several task rows locks them (sql/row-locks.ts): an UPDATE of a thousand ids
 * through a bitmap scan would lock them in the table's order and could deadlock with them.
 */
export async function updateInBatches(
  db: Kysely<unknown>,
  select: RawBuilder<{ id: string }>,
  update: (ids: string[]) => RawBuilder<unknown>,
  batchSize = 1_000,
): Promise<void> {
  const ids = (await select.execute(db)).rows.map((row) => row.id);
  for (let from = 0; from < ids.length; from += batchSize) {
    const batch = ids.slice(from, from + batchSize);
    await inTransaction(db, async (trx) => {
      await trx.executeQuery(CompiledQuery.raw(LOCK_BATCH, [batch]));
      await update(batch).execute(trx);
    });
  }
}

/**
 * Adds `column integer NOT NULL DEFAULT 0` with a `column >= 0` CHECK named `constraint`, online:
 * the column and the CHECK (NOT VALID) in one short transaction, then the rows already there
 * validated under a lock that lets reads and writes go on. A rerun skips what is done.
 */
export async function addCountColumn(
  db: Kysely<unknown>,
  table: string,
  column: string,
  constraint: string,
): Promise<void> {
  if (!(await hasConstraint(db, table, constraint)))
    await inTransaction(db, async (trx) => {
      await sql`
        ALTER TABLE ${sql.table(table)}
          ADD COLUMN ${sql.id(column)} integer NOT NULL DEFAULT 0,
          ADD CONSTRAINT ${sql.id(constraint)} CHECK (${sql.id(column)} >= 0) NOT VALID
      `.execute(trx);
    });
  await validateConstraint(db, table, constraint);
}
