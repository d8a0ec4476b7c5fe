import { sql, type Kysely, type Migration } from 'kysely';

/** The update trigger's function with a `step_started` row of its own (migration 0021's down). */
export const STEP_STARTED_ROWS = sql`
    CREATE OR REPLACE FUNCTION task_events_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
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
        IF NEW.status = 'working' AND NEW.cancel_requested_at IS NULL THEN
          INSERT INTO task_events (task_id, kind, data)
          VALUES (NEW.id, 'step_started',
                  jsonb_build_object('step', NEW.steps_saved + 1, 'worker', NEW.lease_owner));
        END IF;
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
        IF NEW.cancel_requested_at IS NULL THEN
          INSERT INTO task_events (task_id, kind, data)
          VALUES (NEW.id, 'step_started',
                  jsonb_build_object('step', NEW.steps_saved + 1, 'worker', NEW.lease_owner));
        END IF;
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

/**
 * Issue 27's console, completed:
 * - `step_started`: the worker starts step N+1 in the same loop iteration as the claim or the
 *   checkpoint of step N commits, with no write in between (apps/worker/src/attempt/step-loop.ts), so the
 *   trigger records the start with that write instead of the worker paying one more round trip
 *   per step. Not written when a cancel is already requested (the worker settles it instead of
 *   starting a step). A step's end is its `checkpoint`, or the settle event of the last step.
 * - `seconds` on the settle events (completed, failed, expired, cancelled): the task's time from
 *   create to settle, so the health page's latency chart reads events alone (no join to tasks).
 * - `sweeper_state`: one row, written by the sweeper leader after each sweep (which worker, when,
 *   what it did, its retention and interval), so any gateway's health page shows the last sweep
 *   even when it changed nothing. One small upsert per sweep interval, off every task's path.
 */
export const consoleHistoryAndSweeps: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await STEP_STARTED_ROWS.execute(db);
    await sql`
      CREATE TABLE sweeper_state (
        singleton boolean PRIMARY KEY DEFAULT true CONSTRAINT sweeper_state_one_row CHECK (singleton),
        worker_id text NOT NULL,
        swept_at timestamptz NOT NULL,
        duration_ms integer NOT NULL,
        expired integer NOT NULL,
        redispatched integer NOT NULL,
        deleted integer NOT NULL,
        retention_ms bigint NOT NULL,
        interval_ms integer NOT NULL
      )
    `.execute(db);
  },
};
