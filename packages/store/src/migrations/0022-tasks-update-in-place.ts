import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Steady state at scale (issue 25, docs/adr/0010-tasks-update-in-place.md):
 * - `fillfactor = 80`: inserts leave a fifth of each heap page free, so an update that changes no
 *   indexed column can put its new row version on the same page (a HOT update: no index entry,
 *   and the old version is pruned by the next reader of the page, without vacuum). Applies to
 *   pages written from now on; existing pages keep their fill until rewritten.
 * - The held half of the orphan scan no longer has an index keyed on `lease_expires_at`: a lease
 *   renewal changes that column alone, so while any index named it no renewal could be HOT, and
 *   each one wrote an entry into every index the row is in. The held rows (at most every
 *   worker's concurrency) are found through `tasks_held_working_by_owner` instead and filtered
 *   on expiry, a read of the in-flight rows once per sweep instead of index writes per renewal.
 * - Per-table autovacuum: vacuum once 1,000 + 2 % of the rows are dead (the server default waits
 *   for 20 %), with five times the default cost budget per sleep, so the claim, checkpoint and
 *   settle updates (which change indexed columns and can never be HOT) leave a bounded tail.
 * ALTER TABLE … SET takes a lock that lets reads and writes go on; the index build blocks writes
 * to `tasks` while it scans the table (seconds at millions of rows). A build before this one
 * runs its orphan scan without the dropped index: the same rows, read through another index.
 */
export const tasksUpdateInPlace: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      ALTER TABLE tasks SET (
        fillfactor = 80,
        autovacuum_vacuum_threshold = 1000,
        autovacuum_vacuum_scale_factor = 0.02,
        autovacuum_analyze_threshold = 1000,
        autovacuum_analyze_scale_factor = 0.05,
        autovacuum_vacuum_cost_delay = 2,
        autovacuum_vacuum_cost_limit = 1000
      )
    `.execute(db);
    await sql`
      CREATE INDEX tasks_held_working_by_owner ON tasks (lease_owner)
      WHERE status = 'working' AND lease_owner IS NOT NULL
    `.execute(db);
    await sql`DROP INDEX tasks_held_working_by_lease_expiry`.execute(db);
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE INDEX tasks_held_working_by_lease_expiry ON tasks (lease_expires_at)
      WHERE status = 'working' AND lease_owner IS NOT NULL
    `.execute(db);
    await sql`DROP INDEX tasks_held_working_by_owner`.execute(db);
    await sql`
      ALTER TABLE tasks RESET (
        fillfactor,
        autovacuum_vacuum_threshold,
        autovacuum_vacuum_scale_factor,
        autovacuum_analyze_threshold,
        autovacuum_analyze_scale_factor,
        autovacuum_vacuum_cost_delay,
        autovacuum_vacuum_cost_limit
      )
    `.execute(db);
  },
};
