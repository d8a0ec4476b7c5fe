-- 0007: only cancel requests and listened tasks (the held-expiry case needs a lease, not exercised here).
DROP TRIGGER IF EXISTS tasks_notify_insert ON tasks;
DROP TRIGGER IF EXISTS tasks_notify_update ON tasks;
DROP TRIGGER IF EXISTS tasks_notify_stmt ON tasks;
CREATE TRIGGER tasks_notify_update AFTER UPDATE ON tasks FOR EACH ROW
WHEN (OLD.cancel_requested_at IS DISTINCT FROM NEW.cancel_requested_at
   OR (NEW.listened AND (OLD.status, OLD.status_message, OLD.input_requests, OLD.ttl_ms, OLD.poll_interval_ms)
        IS DISTINCT FROM (NEW.status, NEW.status_message, NEW.input_requests, NEW.ttl_ms, NEW.poll_interval_ms)))
EXECUTE FUNCTION tasks_notify_change();
