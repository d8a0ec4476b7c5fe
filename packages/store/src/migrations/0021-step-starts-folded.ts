import { sql, type Kysely, type Migration } from 'kysely';
import { STEP_STARTED_ROWS } from './0020-console-history-and-sweeps.js';

/**
 * The task history at the cost of 0017 again (issue 27: under 10 % on the hot paths). Migration
 * 0020 wrote `step_started` as a row of its own after every claim and every checkpoint: three
 * more event rows per task of two steps (8 instead of 5), each one more heap tuple, index entry
 * and WAL record in the transaction of the claim or checkpoint. The start of the next step is now
 * a field of the row it is recorded with:
 * - `claimed`: `{worker, epoch, attempt, stepStarted}`;
 * - `checkpoint`: `{step, message, worker, stepStarted}`;
 * and the history reader (console/history-rows.ts) gives such a row back as the two events it
 * records, `claimed` or `checkpoint` then `step_started {step, worker}`, both with the row's id.
 * `stepStarted` is absent when a cancel was already requested (no step starts), as before.
 * An older build reading these rows shows the step start as a field of the claim or checkpoint.
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

export const stepStartsFolded: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await FOLDED_STEP_STARTS.execute(db);
  },
  /** Back to a row per step start; rows written folded keep their form (an older reader shows the field). */
  async down(db: Kysely<unknown>): Promise<void> {
    await STEP_STARTED_ROWS.execute(db);
  },
};
