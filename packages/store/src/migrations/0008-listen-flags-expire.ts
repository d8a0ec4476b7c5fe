import { sql, type Kysely } from 'kysely';
import { inTransaction, updateInBatches, type StoreMigration } from './online.js';

/**
 * A listen flag (0007) now lasts until `listened_until`: a stream sets it a bound ahead
 * (MCP_LISTEN_FLAG_TTL_MS) and renews it while it stays open, so once no stream has listened
 * for that long the task's changes leave the cluster-wide NOTIFY path again. Before, a flag
 * never cleared, so any tenant could put every change of all its tasks back on that path.
 * A flag with no `listened_until` was set by a release before this one (a replica still running
 * during a rolling deploy): announced as before, until its task ends. Active rows flagged before
 * this migration get one bound (10 minutes, the default) from now. Additive and nullable, so old
 * and new builds run side by side.
 * Online (issue 25): the column is added in an instant transaction of its own; the active rows
 * are found by a read that locks nothing and bounded 1,000 at a time, so no row stays locked for
 * a scan of the whole table.
 */
export const listenFlagsExpire: StoreMigration = {
  transactional: false,
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE tasks ADD COLUMN IF NOT EXISTS listened_until timestamptz`.execute(db);
    await updateInBatches(
      db,
      sql<{ id: string }>`
        SELECT id FROM tasks
        WHERE listened AND listened_until IS NULL AND status IN ('working', 'input_required')`,
      (ids) => sql`
        UPDATE tasks SET listened_until = now() + interval '10 minutes'
        WHERE id = ANY(${ids}::text[]) AND listened AND listened_until IS NULL
          AND status IN ('working', 'input_required')`,
    );
    await inTransaction(db, async (trx) => {
      await sql`DROP TRIGGER tasks_notify_update ON tasks`.execute(trx);
      await sql`
      CREATE TRIGGER tasks_notify_update AFTER UPDATE ON tasks
      FOR EACH ROW
      WHEN (OLD.cancel_requested_at IS DISTINCT FROM NEW.cancel_requested_at
            OR (OLD.lease_owner IS NOT NULL AND NEW.status <> 'working'
                AND NEW.expires_at <= now())
            OR (NEW.listened
                AND (NEW.listened_until IS NULL OR NEW.listened_until > now())
                AND (OLD.status, OLD.status_message, OLD.input_requests, OLD.ttl_ms,
                     OLD.poll_interval_ms)
                    IS DISTINCT FROM
                    (NEW.status, NEW.status_message, NEW.input_requests, NEW.ttl_ms,
                     NEW.poll_interval_ms)))
      EXECUTE FUNCTION tasks_notify_change()
    `.execute(trx);
    });
  },
};
