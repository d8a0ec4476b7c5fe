import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The change feed stops paying Postgres's commit-time NOTIFY lock on writes nobody waits for
 * (docs/adr/0002-notify-only-what-someone-waits-for.md). A transaction that called pg_notify
 * takes one cluster-wide lock at commit, so every notifying write queues behind every other one.
 * Announced from now on, and only these:
 * - a change of `cancel_requested_at`: the worker holding the task must stop now (cancel push);
 * - a held task (leased) leaving `working` after its TTL passed: the sweeper expired it under
 *   its worker, which must stop now instead of at its next lease renewal;
 * - any client-visible change of a task a `subscriptions/listen` stream has flagged
 *   (`listened`, set by flagListenedTasks before the stream's first read).
 * Not announced: a create (nobody can listen to an id before the create returned it) and the
 * visible changes of tasks no stream ever named, which is nearly every task.
 * `listened` is true for every task that existed before this migration (a stream opened by an
 * older replica may be watching it) and false for new ones: ADD COLUMN with a constant default
 * writes no row, and the default then changes for rows inserted later.
 */
export const notifyListenedOnly: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE tasks ADD COLUMN listened boolean NOT NULL DEFAULT true`.execute(db);
    await sql`ALTER TABLE tasks ALTER COLUMN listened SET DEFAULT false`.execute(db);
    await sql`DROP TRIGGER tasks_notify_insert ON tasks`.execute(db);
    await sql`DROP TRIGGER tasks_notify_update ON tasks`.execute(db);
    await sql`
      CREATE TRIGGER tasks_notify_update AFTER UPDATE ON tasks
      FOR EACH ROW
      WHEN (OLD.cancel_requested_at IS DISTINCT FROM NEW.cancel_requested_at
            OR (OLD.lease_owner IS NOT NULL AND NEW.status <> 'working'
                AND NEW.expires_at <= now())
            OR (NEW.listened
                AND (OLD.status, OLD.status_message, OLD.input_requests, OLD.ttl_ms,
                     OLD.poll_interval_ms)
                    IS DISTINCT FROM
                    (NEW.status, NEW.status_message, NEW.input_requests, NEW.ttl_ms,
                     NEW.poll_interval_ms)))
      EXECUTE FUNCTION tasks_notify_change()
    `.execute(db);
  },
};
