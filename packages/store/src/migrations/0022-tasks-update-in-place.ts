import { sql, type Kysely } from 'kysely';
import { createOrphanIndexes } from './0003-orphan-indexes.js';
import {
  createIndexConcurrently,
  dropIndexConcurrently,
  inTransaction,
  updateInBatches,
  type StoreMigration,
} from './online.js';

/**
 * Steady state at scale (issue 25, docs/adr/0010-tasks-update-in-place.md). Postgres makes an
 * update HOT (heap-only: no index entry, the old version pruned by the next reader of its page,
 * no vacuum needed) only when it changes no column any index names and the new version fits on
 * the page. This migration lets the writes of a held task — lease renewals and checkpoints, the
 * most frequent updates — change no indexed column, and leaves them room:
 * - `fillfactor = 80`: inserts leave a fifth of each page free for later versions. Applies to
 *   pages written from now on; existing pages keep their fill until rewritten.
 * - The held half of the orphan scan is no longer indexed on `lease_expires_at` (which a renewal
 *   changes): `tasks_held_working_by_owner` holds the same rows, keyed on `lease_owner`; the scan
 *   reads the held rows (the tasks in flight) and filters on expiry.
 * - The unheld half is no longer indexed on `coalesce(enqueued_at, last_updated_at)` (a
 *   checkpoint's new message moves `last_updated_at`): `unheld_due_at`, kept by the before-write
 *   trigger, holds that value for an unheld `working` task and NULL otherwise, so a held task's
 *   writes leave it unchanged. The trigger runs for every build's writes, so an older build
 *   keeps it right during a rolling deploy (its own orphan scan plans without the dropped index).
 * - Per-table autovacuum: vacuum once 1,000 + 2 % of the rows are dead (the server default waits
 *   for 20 %), with five times the default cost budget per sleep, so the claim, pause and settle
 *   updates (which change what the partial indexes follow, and so are never HOT) leave a bounded
 *   tail of dead versions.
 * Online (issue 25): the settings, the column and the trigger function in one instant
 * transaction (none rewrites the table); the backfill 1,000 rows at a time (only unheld `working`
 * rows, found through the older index); the indexes built and dropped concurrently, so writes to
 * `tasks` go on throughout. Every step is safe to repeat after a crash.
 */
export const tasksUpdateInPlace: StoreMigration = {
  transactional: false,
  async up(db: Kysely<unknown>): Promise<void> {
    await inTransaction(db, async (trx) => {
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
    `.execute(trx);
      await sql`ALTER TABLE tasks ADD COLUMN IF NOT EXISTS unheld_due_at timestamptz`.execute(trx);
      await sql.raw(beforeWrite({ trackUnheldDue: true })).execute(trx);
    });
    // Rows written from here on get it from the trigger; these are the ones nobody wrote since.
    await updateInBatches(
      db,
      sql<{ id: string }>`
        SELECT id FROM tasks
        WHERE status = 'working' AND lease_owner IS NULL AND unheld_due_at IS NULL`,
      (ids) => sql`
        UPDATE tasks SET unheld_due_at = coalesce(enqueued_at, last_updated_at)
        WHERE id = ANY(${ids}::text[]) AND status = 'working' AND lease_owner IS NULL`,
    );
    await createIndexConcurrently(
      db,
      'tasks_unheld_working_by_due_at',
      sql`ON tasks (unheld_due_at) WHERE status = 'working' AND lease_owner IS NULL`,
    );
    await createIndexConcurrently(
      db,
      'tasks_held_working_by_owner',
      sql`ON tasks (lease_owner) WHERE status = 'working' AND lease_owner IS NOT NULL`,
    );
    await dropIndexConcurrently(db, 'tasks_unheld_working_by_due');
    await dropIndexConcurrently(db, 'tasks_held_working_by_lease_expiry');
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await createOrphanIndexes(db);
    await dropIndexConcurrently(db, 'tasks_unheld_working_by_due_at');
    await dropIndexConcurrently(db, 'tasks_held_working_by_owner');
    await inTransaction(db, async (trx) => {
      await sql.raw(beforeWrite({ trackUnheldDue: false })).execute(trx);
      await sql`ALTER TABLE tasks DROP COLUMN IF EXISTS unheld_due_at`.execute(trx);
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
    `.execute(trx);
    });
  },
};

/** Migration 0001's before-write function, with (up) or without (down) `unheld_due_at`. */
function beforeWrite(options: { trackUnheldDue: boolean }): string {
  return `
      CREATE OR REPLACE FUNCTION tasks_before_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          NEW.last_updated_at := NEW.created_at;
        ELSE
          IF (NEW.id, NEW.tenant, NEW.principal, NEW.method, NEW.tool_name, NEW.arguments, NEW.created_at)
             IS DISTINCT FROM
             (OLD.id, OLD.tenant, OLD.principal, OLD.method, OLD.tool_name, OLD.arguments, OLD.created_at) THEN
            RAISE EXCEPTION 'task % identity and operation are immutable', OLD.id
              USING ERRCODE = 'check_violation';
          END IF;
          IF OLD.status IN ('completed', 'failed', 'cancelled')
             AND (NEW.status, NEW.status_message, NEW.result, NEW.error, NEW.input_requests,
                  NEW.input_responses, NEW.checkpoint, NEW.lease_owner, NEW.lease_epoch, NEW.ttl_ms)
                 IS DISTINCT FROM
                 (OLD.status, OLD.status_message, OLD.result, OLD.error, OLD.input_requests,
                  OLD.input_responses, OLD.checkpoint, OLD.lease_owner, OLD.lease_epoch, OLD.ttl_ms) THEN
            RAISE EXCEPTION 'task % is % and can never change again', OLD.id, OLD.status
              USING ERRCODE = 'check_violation';
          END IF;
          IF NOT (NEW.issued_input_keys @> OLD.issued_input_keys) THEN
            RAISE EXCEPTION 'task % input keys are append-only', OLD.id USING ERRCODE = 'check_violation';
          END IF;
          IF NEW.lease_epoch < OLD.lease_epoch THEN
            RAISE EXCEPTION 'task % lease epoch went backwards', OLD.id USING ERRCODE = 'check_violation';
          END IF;
          IF (NEW.status, NEW.status_message, NEW.result, NEW.error, NEW.input_requests, NEW.ttl_ms,
              NEW.poll_interval_ms)
             IS DISTINCT FROM
             (OLD.status, OLD.status_message, OLD.result, OLD.error, OLD.input_requests, OLD.ttl_ms,
              OLD.poll_interval_ms) THEN
            NEW.last_updated_at := greatest(now(), OLD.last_updated_at);
          ELSE
            NEW.last_updated_at := OLD.last_updated_at;
          END IF;
        END IF;
        NEW.expires_at := CASE WHEN NEW.ttl_ms IS NULL THEN NULL
                               ELSE NEW.created_at + NEW.ttl_ms * interval '1 millisecond' END;
${options.trackUnheldDue ? TRACK_UNHELD_DUE : ''}        RETURN NEW;
      END
      $$
  `;
}

const TRACK_UNHELD_DUE = `        -- 0022: for a working task nobody holds, where the sweeper's grace starts (its last wake-up
        -- mark, else its last visible change); NULL otherwise, so a held task's writes (renewals,
        -- checkpoints) leave it, and the index on it, as they were.
        NEW.unheld_due_at := CASE WHEN NEW.status = 'working' AND NEW.lease_owner IS NULL
                                  THEN coalesce(NEW.enqueued_at, NEW.last_updated_at) END;
`;
