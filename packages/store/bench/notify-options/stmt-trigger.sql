-- Coalesced: one notification per statement with every changed id (transition tables).
DROP TRIGGER IF EXISTS tasks_notify_insert ON tasks;
DROP TRIGGER IF EXISTS tasks_notify_update ON tasks;
DROP TRIGGER IF EXISTS tasks_notify_stmt ON tasks;
CREATE OR REPLACE FUNCTION tasks_notify_stmt() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ids text;
BEGIN
  SELECT string_agg(n.id, ',') INTO ids FROM new_rows n JOIN old_rows o USING (id)
   WHERE (o.status, o.status_message, o.input_requests, o.cancel_requested_at, o.ttl_ms, o.poll_interval_ms)
      IS DISTINCT FROM (n.status, n.status_message, n.input_requests, n.cancel_requested_at, n.ttl_ms, n.poll_interval_ms);
  IF ids IS NOT NULL THEN PERFORM pg_notify('mcp_task_changes', ids); END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER tasks_notify_stmt AFTER UPDATE ON tasks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION tasks_notify_stmt();
