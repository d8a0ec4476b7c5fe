\set r random(1, 1000000000)
update "tasks" set "lease_owner" = 'w1', "lease_expires_at" = now() + 30000::bigint * interval '1 millisecond', "lease_epoch" = lease_epoch + 1, "attempts" = attempts + 1, "failures" = failures + (CASE WHEN lease_owner IS NOT NULL THEN 1 ELSE 0 END) where "id" = 'tsk_' || :r and "status" = 'working' and (lease_owner IS NULL OR lease_expires_at <= now()) returning *;
