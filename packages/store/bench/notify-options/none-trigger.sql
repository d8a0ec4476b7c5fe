-- Baseline: no notify trigger at all.
DROP TRIGGER IF EXISTS tasks_notify_insert ON tasks;
DROP TRIGGER IF EXISTS tasks_notify_update ON tasks;
DROP TRIGGER IF EXISTS tasks_notify_stmt ON tasks;
