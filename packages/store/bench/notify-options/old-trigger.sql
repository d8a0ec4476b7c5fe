-- 0001: a notification for every insert and every client-visible update.
DROP TRIGGER IF EXISTS tasks_notify_insert ON tasks;
DROP TRIGGER IF EXISTS tasks_notify_update ON tasks;
DROP TRIGGER IF EXISTS tasks_notify_stmt ON tasks;
CREATE TRIGGER tasks_notify_insert AFTER INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION tasks_notify_change();
CREATE TRIGGER tasks_notify_update AFTER UPDATE ON tasks FOR EACH ROW
WHEN ((OLD.status, OLD.status_message, OLD.input_requests, OLD.cancel_requested_at, OLD.ttl_ms, OLD.poll_interval_ms)
      IS DISTINCT FROM (NEW.status, NEW.status_message, NEW.input_requests, NEW.cancel_requested_at, NEW.ttl_ms, NEW.poll_interval_ms))
EXECUTE FUNCTION tasks_notify_change();
