import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The task table and the invariants the database itself enforces, so a bug in one repository
 * function cannot produce a state the lifecycle rules (packages/tasks) forbid:
 * - checks tie result/error/inputRequests/lease to the statuses that may carry them;
 * - a trigger refuses any change to a terminal task except recording a late cancel request,
 *   refuses changes to identity and operation, and keeps issued input keys append-only;
 * - a trigger maintains last_updated_at (only for client-visible changes) and expires_at;
 * - a trigger notifies `mcp_task_changes` for every client-visible transition, inside the same
 *   transaction, so no code path can commit a change and forget to announce it.
 */
export const createTasks: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`
      CREATE TABLE tasks (
        id text PRIMARY KEY,
        tenant text NOT NULL,
        principal text NOT NULL,
        method text NOT NULL,
        tool_name text NOT NULL,
        arguments jsonb NOT NULL,
        status text NOT NULL DEFAULT 'working',
        status_message text,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_updated_at timestamptz NOT NULL DEFAULT now(),
        ttl_ms bigint,
        poll_interval_ms integer,
        expires_at timestamptz,
        result jsonb,
        error jsonb,
        input_requests jsonb NOT NULL DEFAULT '{}'::jsonb,
        issued_input_keys text[] NOT NULL DEFAULT '{}',
        input_responses jsonb NOT NULL DEFAULT '{}'::jsonb,
        cancel_requested_at timestamptz,
        checkpoint jsonb,
        lease_owner text,
        lease_expires_at timestamptz,
        lease_epoch integer NOT NULL DEFAULT 0,
        attempts integer NOT NULL DEFAULT 0,
        last_attempt_error text,
        enqueued_at timestamptz,
        CONSTRAINT tasks_status_known
          CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
        CONSTRAINT tasks_method_known CHECK (method = 'tools/call'),
        CONSTRAINT tasks_arguments_object CHECK (jsonb_typeof(arguments) = 'object'),
        CONSTRAINT tasks_ttl_non_negative CHECK (ttl_ms IS NULL OR ttl_ms >= 0),
        CONSTRAINT tasks_poll_interval_positive CHECK (poll_interval_ms IS NULL OR poll_interval_ms > 0),
        CONSTRAINT tasks_result_iff_completed
          CHECK ((status = 'completed') = (result IS NOT NULL AND jsonb_typeof(result) = 'object')),
        CONSTRAINT tasks_error_iff_failed
          CHECK ((status = 'failed') = (error IS NOT NULL AND jsonb_typeof(error -> 'code') = 'number'
                                        AND jsonb_typeof(error -> 'message') = 'string')),
        CONSTRAINT tasks_input_requests_object CHECK (jsonb_typeof(input_requests) = 'object'),
        CONSTRAINT tasks_input_responses_object CHECK (jsonb_typeof(input_responses) = 'object'),
        CONSTRAINT tasks_requests_iff_input_required
          CHECK ((status = 'input_required') = (input_requests <> '{}'::jsonb)),
        CONSTRAINT tasks_lease_only_while_working CHECK (lease_owner IS NULL OR status = 'working'),
        CONSTRAINT tasks_lease_owner_and_expiry
          CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL)),
        CONSTRAINT tasks_lease_epoch_non_negative CHECK (lease_epoch >= 0 AND attempts >= 0)
      )
    `.execute(db);

    await sql`
      CREATE FUNCTION tasks_before_write() RETURNS trigger LANGUAGE plpgsql AS $$
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
        RETURN NEW;
      END
      $$
    `.execute(db);
    await sql`
      CREATE TRIGGER tasks_before_write BEFORE INSERT OR UPDATE ON tasks
      FOR EACH ROW EXECUTE FUNCTION tasks_before_write()
    `.execute(db);

    await sql`
      CREATE FUNCTION tasks_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('mcp_task_changes', NEW.id);
        RETURN NULL;
      END
      $$
    `.execute(db);
    await sql`
      CREATE TRIGGER tasks_notify_insert AFTER INSERT ON tasks
      FOR EACH ROW EXECUTE FUNCTION tasks_notify_change()
    `.execute(db);
    await sql`
      CREATE TRIGGER tasks_notify_update AFTER UPDATE ON tasks
      FOR EACH ROW
      WHEN ((OLD.status, OLD.status_message, OLD.input_requests, OLD.cancel_requested_at, OLD.ttl_ms,
             OLD.poll_interval_ms)
            IS DISTINCT FROM
            (NEW.status, NEW.status_message, NEW.input_requests, NEW.cancel_requested_at, NEW.ttl_ms,
             NEW.poll_interval_ms))
      EXECUTE FUNCTION tasks_notify_change()
    `.execute(db);

    // Owner lookups go through the primary key, so no (tenant, principal) index. The sweeper's
    // scans touch only non-terminal rows (or only terminal rows past expiry), hence partial indexes.
    await sql`
      CREATE INDEX tasks_working_by_enqueue ON tasks (enqueued_at NULLS FIRST) WHERE status = 'working'
    `.execute(db);
    await sql`
      CREATE INDEX tasks_active_by_expiry ON tasks (expires_at)
      WHERE status IN ('working', 'input_required') AND expires_at IS NOT NULL
    `.execute(db);
    await sql`
      CREATE INDEX tasks_terminal_by_expiry ON tasks (expires_at)
      WHERE status IN ('completed', 'failed', 'cancelled') AND expires_at IS NOT NULL
    `.execute(db);
  },
};
