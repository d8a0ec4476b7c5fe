import { sql, type Kysely, type Migration } from 'kysely';
import { STEP_STARTED_ROWS } from './0020-console-history-and-sweeps.js';

/**
 * The task history at under 10 % on the hot paths again (issue 27). Two changes, measured by
 * counting the server's instructions per lifecycle (create, claim, 2 checkpoints, 2 renewals,
 * complete) under callgrind (docs/adr/0012-task-history-write-cost.md has the method):
 * - A step's start is a field of the row it is recorded with, not a row of its own. Migration
 *   0020 wrote `step_started` after every claim and every checkpoint: three more event rows per
 *   task of two steps (8 instead of 5), each one more heap tuple, index entries and WAL. Now
 *   `claimed` is `{worker, epoch, attempt, stepStarted}` and `checkpoint` is
 *   `{step, message, worker, stepStarted}`; the history reader (console/history-rows.ts) gives such
 *   a row back as the two events it records, `claimed` or `checkpoint` then
 *   `step_started {step, worker}`, both with the row's id. No `stepStarted` when a cancel was
 *   already requested (no step starts), as before. An older build shows it as a field.
 * - The update trigger has no WHEN any more. Postgres reads a trigger's WHEN back from its stored
 *   text and prepares it again for every UPDATE statement on the table: 0017's eight-column
 *   comparison cost about 110,000 instructions per UPDATE, renewals included, while calling the
 *   function on a renewal costs about 18,000 (it writes nothing: each of its conditions needs a
 *   change of a column a renewal or a listen flag never touches). The function's conditions are
 *   what the WHEN said, so the same events are written.
 */
export const FOLDED_STEP_STARTS = sql`
  CREATE OR REPLACE FUNCTION task_events_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    answered text[];
  BEGIN
    IF NEW.cancel_requested_at IS NOT NULL AND OLD.cancel_requested_at IS NULL THEN
      INSERT INTO task_events (task_id, kind) VALUES (NEW.id, 'cancel_requested');
    END IF;
    IF NEW.lease_epoch > OLD.lease_epoch THEN
      IF OLD.lease_owner IS NOT NULL THEN
        INSERT INTO task_events (task_id, kind, data)
        VALUES (NEW.id, 'lease_taken_over',
                jsonb_build_object('previousWorker', OLD.lease_owner, 'previousEpoch', OLD.lease_epoch,
                                   'expiredAt', OLD.lease_expires_at));
      END IF;
      IF NEW.status = 'working' AND NEW.cancel_requested_at IS NULL THEN
        INSERT INTO task_events (task_id, kind, data)
        VALUES (NEW.id, 'claimed',
                jsonb_build_object('worker', NEW.lease_owner, 'epoch', NEW.lease_epoch,
                                   'attempt', NEW.attempts, 'stepStarted', NEW.steps_saved + 1));
      ELSE
        INSERT INTO task_events (task_id, kind, data)
        VALUES (NEW.id, 'claimed',
                jsonb_build_object('worker', NEW.lease_owner, 'epoch', NEW.lease_epoch,
                                   'attempt', NEW.attempts));
      END IF;
    END IF;
    IF OLD.status = 'input_required' AND NEW.input_responses IS DISTINCT FROM OLD.input_responses THEN
      SELECT coalesce(array_agg(k), '{}') INTO answered
      FROM jsonb_object_keys(NEW.input_responses) AS k WHERE NOT OLD.input_responses ? k;
      INSERT INTO task_events (task_id, kind, data)
      VALUES (NEW.id, 'input_answered', jsonb_build_object('keys', to_jsonb(answered)));
    END IF;
    IF NEW.steps_saved > OLD.steps_saved AND NEW.status = 'working' THEN
      IF NEW.cancel_requested_at IS NULL THEN
        INSERT INTO task_events (task_id, kind, data)
        VALUES (NEW.id, 'checkpoint',
                jsonb_build_object('step', NEW.steps_saved, 'message', NEW.status_message,
                                   'worker', NEW.lease_owner, 'stepStarted', NEW.steps_saved + 1));
      ELSE
        INSERT INTO task_events (task_id, kind, data)
        VALUES (NEW.id, 'checkpoint',
                jsonb_build_object('step', NEW.steps_saved, 'message', NEW.status_message));
      END IF;
    END IF;
    IF NEW.failures > OLD.failures AND NEW.lease_epoch = OLD.lease_epoch THEN
      INSERT INTO task_events (task_id, kind, data)
      VALUES (NEW.id, 'attempt_failed',
              jsonb_build_object('error', NEW.last_attempt_error, 'failures', NEW.failures));
    ELSIF NEW.enqueued_at IS NOT NULL AND NEW.enqueued_at IS DISTINCT FROM OLD.enqueued_at THEN
      INSERT INTO task_events (task_id, kind) VALUES (NEW.id, 'enqueued');
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
                     THEN jsonb_build_object('error', NEW.error, 'message', NEW.status_message,
                                             'seconds', extract(epoch FROM now() - NEW.created_at))
                   WHEN NEW.status IN ('completed', 'cancelled')
                     THEN jsonb_build_object('message', NEW.status_message,
                                             'seconds', extract(epoch FROM now() - NEW.created_at))
                   ELSE jsonb_build_object('message', NEW.status_message) END);
    ELSIF OLD.lease_owner IS NOT NULL AND NEW.lease_owner IS NULL AND NEW.status = 'working'
          AND NEW.failures = OLD.failures THEN
      INSERT INTO task_events (task_id, kind, data)
      VALUES (NEW.id, 'lease_released', jsonb_build_object('worker', OLD.lease_owner));
    END IF;
    RETURN NULL;
  END
  $$
`;

/** 0017's WHEN: the function ran only for a change of a column it reads. */
const UPDATE_TRIGGER_WITH_WHEN = sql`
  CREATE TRIGGER task_events_on_update AFTER UPDATE ON tasks
  FOR EACH ROW
  WHEN ((OLD.status, OLD.lease_epoch, OLD.lease_owner, OLD.steps_saved, OLD.cancel_requested_at,
         OLD.input_responses, OLD.failures, OLD.enqueued_at)
        IS DISTINCT FROM
        (NEW.status, NEW.lease_epoch, NEW.lease_owner, NEW.steps_saved, NEW.cancel_requested_at,
         NEW.input_responses, NEW.failures, NEW.enqueued_at))
  EXECUTE FUNCTION task_events_on_update()
`;

export const stepStartsFolded: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await FOLDED_STEP_STARTS.execute(db);
    await sql`DROP TRIGGER task_events_on_update ON tasks`.execute(db);
    await sql`
      CREATE TRIGGER task_events_on_update AFTER UPDATE ON tasks
      FOR EACH ROW EXECUTE FUNCTION task_events_on_update()
    `.execute(db);
  },
  /** Back to 0020; rows written folded keep their form (an older reader shows the field). */
  async down(db: Kysely<unknown>): Promise<void> {
    await STEP_STARTED_ROWS.execute(db);
    await sql`DROP TRIGGER task_events_on_update ON tasks`.execute(db);
    await UPDATE_TRIGGER_WITH_WHEN.execute(db);
  },
};
