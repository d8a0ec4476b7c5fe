\set r random(1, 1000000000)
SELECT id, status, status_message, created_at, last_updated_at, ttl_ms, poll_interval_ms, expires_at, input_requests, cancel_requested_at FROM tasks WHERE id = 'tsk_' || :r AND tenant = 't' AND principal = 'p';
