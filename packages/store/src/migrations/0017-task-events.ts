import { sql, type Kysely } from 'kysely';
import { createIndexConcurrently, inTransaction, type StoreMigration } from './online.js';

/**
 * The task history (docs/adr/0008-task-events-by-trigger.md): `task_events`, append-only, one row
 * per thing that happened to a task, written by triggers on `tasks` inside the transaction that
 * made the change, so no code path (or older build during a rolling deploy) can change a task and
 * forget its event. Derived from OLD/NEW:
 * - created (statement-level, one INSERT per multi-row create);
 * - claimed (new epoch; worker and attempt), and lease_taken_over when the previous lease was
 *   never released (its holder died or stalled past expiry);
 * - checkpoint (steps_saved grew while working), input_requested, input_answered, resumed;
 * - cancel_requested, lease_released, attempt_failed (a retry follows), enqueued (sweeper);
 * - completed, failed, expired, cancelled.
 * A lease renewal changes only `lease_expires_at`: the trigger's WHEN leaves it out, so the
 * hottest update runs no trigger function at all. Listen flags write no event either.
 * Console actions add their audit rows (`actor` set) in the same transaction as the action.
 * No foreign key (its check would run on every event insert): events leave with their task
 * through a statement-level AFTER DELETE trigger, one indexed delete per sweeper batch.
 */
async function createHistory(db: Kysely<unknown>): Promise<void> {
  await sql`
      CREATE TABLE task_events (
        id bigint GENERATED ALWAYS AS IDENTITY,
        task_id text NOT NULL,
        at timestamptz NOT NULL DEFAULT now(),
        kind text NOT NULL,
        actor text,
        data jsonb NOT NULL DEFAULT '{}'::jsonb,
        CONSTRAINT task_events_data_object CHECK (jsonb_typeof(data) = 'object')
      )
    `.execute(db);
  await sql`CREATE INDEX task_events_by_task ON task_events (task_id, id)`.execute(db);
  // No primary key: a btree on `id` would be one more index insert per event on the hot paths.
  // Rows arrive in id and time order, so BRIN indexes (next to free per insert) serve the live
  // tail (ids after a mark) and the throughput chart (the last hour).
  await sql`CREATE INDEX task_events_by_id ON task_events USING brin (id)`.execute(db);
  await sql`CREATE INDEX task_events_by_time ON task_events USING brin (at)`.execute(db);

  await sql`
      CREATE FUNCTION task_events_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO task_events (task_id, kind, data)
        SELECT id, 'created', jsonb_build_object('tool', tool_name, 'status', status)
        FROM inserted;
        INSERT INTO task_events (task_id, kind, data)
        SELECT id, status, jsonb_build_object('message', status_message)
        FROM inserted WHERE status <> 'working';
        RETURN NULL;
      END
      $$
    `.execute(db);
  await sql`
      CREATE TRIGGER task_events_on_insert AFTER INSERT ON tasks
      REFERENCING NEW TABLE AS inserted
      FOR EACH STATEMENT EXECUTE FUNCTION task_events_on_insert()
    `.execute(db);

  await sql`
      CREATE FUNCTION task_events_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        answered text[];
      BEGIN
        IF NEW.cancel_requested_at IS NOT NULL AND OLD.cancel_requested_at IS NULL THEN
          INSERT INTO task_events (task_id, kind, data)
          VALUES (NEW.id, 'cancel_requested', '{}'::jsonb);
        END IF;
        IF NEW.lease_epoch > OLD.lease_epoch THEN
          IF OLD.lease_owner IS NOT NULL THEN
            INSERT INTO task_events (task_id, kind, data)
            VALUES (NEW.id, 'lease_taken_over',
                    jsonb_build_object('previousWorker', OLD.lease_owner, 'previousEpoch', OLD.lease_epoch,
                                       'expiredAt', OLD.lease_expires_at));
          END IF;
          INSERT INTO task_events (task_id, kind, data)
          VALUES (NEW.id, 'claimed',
                  jsonb_build_object('worker', NEW.lease_owner, 'epoch', NEW.lease_epoch,
                                     'attempt', NEW.attempts));
        END IF;
        IF OLD.status = 'input_required' AND NEW.input_responses IS DISTINCT FROM OLD.input_responses THEN
          SELECT coalesce(array_agg(k), '{}') INTO answered
          FROM jsonb_object_keys(NEW.input_responses) AS k WHERE NOT OLD.input_responses ? k;
          INSERT INTO task_events (task_id, kind, data)
          VALUES (NEW.id, 'input_answered', jsonb_build_object('keys', to_jsonb(answered)));
        END IF;
        IF NEW.steps_saved > OLD.steps_saved AND NEW.status = 'working' THEN
          INSERT INTO task_events (task_id, kind, data)
          VALUES (NEW.id, 'checkpoint',
                  jsonb_build_object('step', NEW.steps_saved, 'message', NEW.status_message));
        END IF;
        IF NEW.failures > OLD.failures AND NEW.lease_epoch = OLD.lease_epoch THEN
          INSERT INTO task_events (task_id, kind, data)
          VALUES (NEW.id, 'attempt_failed',
                  jsonb_build_object('error', NEW.last_attempt_error, 'failures', NEW.failures));
        ELSIF NEW.enqueued_at IS NOT NULL AND NEW.enqueued_at IS DISTINCT FROM OLD.enqueued_at THEN
          INSERT INTO task_events (task_id, kind, data) VALUES (NEW.id, 'enqueued', '{}'::jsonb);
        END IF;
        IF NEW.status IS DISTINCT FROM OLD.status THEN
          INSERT INTO task_events (task_id, kind, data)
          VALUES (NEW.id,
                  CASE WHEN NEW.status = 'input_required' THEN 'input_requested'
                       WHEN NEW.status = 'working' THEN 'resumed'
                       WHEN NEW.status = 'failed' AND NEW.error ->> 'message' = 'task expired' THEN 'expired'
                       ELSE NEW.status END,
                  CASE WHEN NEW.status = 'input_required'
                         THEN jsonb_build_object('keys', (SELECT coalesce(jsonb_agg(k), '[]'::jsonb)
                                                          FROM jsonb_object_keys(NEW.input_requests) AS k),
                                                 'message', NEW.status_message)
                       WHEN NEW.status = 'failed'
                         THEN jsonb_build_object('error', NEW.error, 'message', NEW.status_message)
                       ELSE jsonb_build_object('message', NEW.status_message) END);
        ELSIF OLD.lease_owner IS NOT NULL AND NEW.lease_owner IS NULL AND NEW.status = 'working'
              AND NEW.failures = OLD.failures THEN
          INSERT INTO task_events (task_id, kind, data)
          VALUES (NEW.id, 'lease_released', jsonb_build_object('worker', OLD.lease_owner));
        END IF;
        RETURN NULL;
      END
      $$
    `.execute(db);
  // Every column the function reads a change of, and nothing else: a renewal (only
  // lease_expires_at) or a listen flag never calls it.
  await sql`
      CREATE TRIGGER task_events_on_update AFTER UPDATE ON tasks
      FOR EACH ROW
      WHEN ((OLD.status, OLD.lease_epoch, OLD.lease_owner, OLD.steps_saved, OLD.cancel_requested_at,
             OLD.input_responses, OLD.failures, OLD.enqueued_at)
            IS DISTINCT FROM
            (NEW.status, NEW.lease_epoch, NEW.lease_owner, NEW.steps_saved, NEW.cancel_requested_at,
             NEW.input_responses, NEW.failures, NEW.enqueued_at))
      EXECUTE FUNCTION task_events_on_update()
    `.execute(db);

  await sql`
      CREATE FUNCTION task_events_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM task_events e USING deleted WHERE e.task_id = deleted.id;
        RETURN NULL;
      END
      $$
    `.execute(db);
  await sql`
      CREATE TRIGGER task_events_on_delete AFTER DELETE ON tasks
      REFERENCING OLD TABLE AS deleted
      FOR EACH STATEMENT EXECUTE FUNCTION task_events_on_delete()
    `.execute(db);
}

/**
 * Online (issue 25): the history table and its triggers in one short transaction (skipped when
 * a crashed run already committed it), then the console's indexes on `tasks`, built concurrently.
 */
export const taskEvents: StoreMigration = {
  transactional: false,
  async up(db: Kysely<unknown>): Promise<void> {
    const history = await sql<{ exists: boolean }>`
      SELECT to_regclass('task_events') IS NOT NULL AS exists`.execute(db);
    if (history.rows[0]?.exists !== true) await inTransaction(db, createHistory);
    // The console's keyset pages: newest first, across tenants or within one.
    await createIndexConcurrently(db, 'tasks_by_created', sql`ON tasks (created_at, id)`);
    await createIndexConcurrently(
      db,
      'tasks_by_tenant_created',
      sql`ON tasks (tenant, created_at, id)`,
    );
  },
};
