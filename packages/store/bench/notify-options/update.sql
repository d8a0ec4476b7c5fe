\set n random(1, 10000)
UPDATE tasks SET status_message = md5(random()::text) WHERE id = 'r' || :n;
