import { sql } from 'kysely';

/** Hand-written statements on `tasks` that the query builder cannot say (rows/ runs them). */

/** A task nobody holds: waiting for input, or working without a live lease. */
const UNHELD = sql`(t.status = 'input_required'
  OR (t.status = 'working' AND (t.lease_owner IS NULL OR t.lease_expires_at <= now())))`;

/**
 * What an answer writes, in both record statements below (`t` the row, `answered` its answered
 * keys and their responses, `$5` the resumed status message): the keys move from the requests to
 * the responses, and the last one resumes the task — `working`, unheld, to be woken again.
 */
const ANSWER_WRITES = `
      input_responses = t.input_responses || answered.responses,
      input_requests = t.input_requests - answered.keys,
      status = CASE WHEN t.input_requests - answered.keys = '{}'::jsonb THEN 'working'
                    ELSE t.status END,
      status_message = CASE WHEN t.input_requests - answered.keys = '{}'::jsonb
                            THEN $5 ELSE t.status_message END,
      lease_owner = NULL,
      lease_expires_at = NULL,
      enqueued_at = CASE WHEN t.input_requests - answered.keys = '{}'::jsonb THEN NULL
                         ELSE t.enqueued_at END`;

/**
 * One caller's answers to one task ($1 id, $2 tenant, $3 principal, $4 the responses as JSON, $5
 * the resumed message): the row locked (waiting for the lock), only keys still outstanding
 * recorded; `found` whether the owner has the task, `status` the status written (null: nothing).
 */
export const RECORD_INPUT_RESPONSES = `
    WITH current_task AS (
      SELECT id, input_requests FROM tasks
      WHERE id = $1 AND tenant = $2 AND principal = $3
      FOR UPDATE
    ),
    answered AS (
      SELECT coalesce(jsonb_object_agg(r.key, r.value), '{}'::jsonb) AS responses,
             coalesce(array_agg(r.key), '{}'::text[]) AS keys
      FROM current_task, jsonb_each($4::jsonb) AS r(key, value)
      WHERE current_task.input_requests ? r.key
    ),
    updated AS (
      UPDATE tasks t
      SET ${ANSWER_WRITES}
      FROM current_task, answered
      WHERE t.id = current_task.id AND t.status = 'input_required' AND cardinality(answered.keys) > 0
      RETURNING t.status
    )
    SELECT EXISTS (SELECT 1 FROM current_task) AS found, (SELECT status FROM updated) AS status
  `;

/**
 * RECORD_INPUT_RESPONSES for several tasks at once (one per id): the same locks, the same
 * filter and the same writes row by row, one row out per key found (`status` null where nothing
 * was recorded). It never waits for a lock (NOWAIT: a row another transaction holds fails it at
 * once, with nothing written), so the answers batched behind it are never held up by one row.
 */
export const RECORD_MANY_INPUT_RESPONSES = `
    WITH wanted AS (
      SELECT w.id, w.tenant, w.principal, w.responses
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
        AS w(id, tenant, principal, responses)
    ),
    current_task AS (
      SELECT t.id, t.input_requests, w.responses::jsonb AS responses
      FROM tasks t JOIN wanted w ON t.id = w.id AND t.tenant = w.tenant AND t.principal = w.principal
      FOR UPDATE OF t NOWAIT
    ),
    answered AS (
      SELECT c.id, jsonb_object_agg(r.key, r.value) AS responses, array_agg(r.key) AS keys
      FROM current_task c, jsonb_each(c.responses) AS r(key, value)
      WHERE c.input_requests ? r.key
      GROUP BY c.id
    ),
    updated AS (
      UPDATE tasks t
      SET ${ANSWER_WRITES}
      FROM answered
      WHERE t.id = answered.id AND t.status = 'input_required'
      RETURNING t.id, t.status
    )
    SELECT c.id, u.status FROM current_task c LEFT JOIN updated u ON u.id = c.id
  `;

export const requestCancelStatement = (p: {
  taskId: string;
  tenant: string;
  principal: string;
  cancelledMessage: string;
}) =>
  sql<{ found: boolean; cancelled_directly: boolean }>`
    WITH current_task AS (
      SELECT id,
             (status = 'input_required'
              OR (status = 'working' AND (lease_owner IS NULL OR lease_expires_at <= now()))) AS unheld
      FROM tasks
      WHERE id = ${p.taskId} AND tenant = ${p.tenant} AND principal = ${p.principal}
      FOR UPDATE
    ),
    updated AS (
      UPDATE tasks t
      SET cancel_requested_at = coalesce(t.cancel_requested_at, now()),
          status = CASE WHEN current_task.unheld THEN 'cancelled' ELSE t.status END,
          status_message = CASE WHEN current_task.unheld THEN ${p.cancelledMessage}
                                ELSE t.status_message END,
          input_requests = CASE WHEN current_task.unheld THEN '{}'::jsonb ELSE t.input_requests END,
          lease_owner = CASE WHEN current_task.unheld THEN NULL ELSE t.lease_owner END,
          lease_expires_at = CASE WHEN current_task.unheld THEN NULL ELSE t.lease_expires_at END
      FROM current_task
      WHERE t.id = current_task.id AND (t.cancel_requested_at IS NULL OR current_task.unheld)
      RETURNING current_task.unheld
    )
    SELECT EXISTS (SELECT 1 FROM current_task) AS found,
           coalesce((SELECT unheld FROM updated), false) AS cancelled_directly
  `;

export const withdrawTasksStatement = (p: {
  withdrawnMessage: string;
  ids: readonly string[];
  tenants: readonly string[];
  principals: readonly string[];
  toolNames: readonly string[];
  ttlMs: readonly (number | null)[];
}) =>
  sql`
    INSERT INTO tasks AS t (id, tenant, principal, method, tool_name, arguments, status,
                           status_message, cancel_requested_at, ttl_ms)
    SELECT id, tenant, principal, 'tools/call', tool_name, '{}'::jsonb, 'cancelled',
           ${p.withdrawnMessage}, now(), ttl_ms
    FROM unnest(${p.ids}::text[], ${p.tenants}::text[],
                ${p.principals}::text[],
                ${p.toolNames}::text[],
                ${p.ttlMs}::bigint[])
      AS w(id, tenant, principal, tool_name, ttl_ms)
    ON CONFLICT (id) DO UPDATE
    SET cancel_requested_at = coalesce(t.cancel_requested_at, now()),
        status = CASE WHEN ${UNHELD} THEN 'cancelled' ELSE t.status END,
        status_message = CASE WHEN ${UNHELD} THEN ${p.withdrawnMessage} ELSE t.status_message END,
        input_requests = CASE WHEN ${UNHELD} THEN '{}'::jsonb ELSE t.input_requests END,
        lease_owner = CASE WHEN ${UNHELD} THEN NULL ELSE t.lease_owner END,
        lease_expires_at = CASE WHEN ${UNHELD} THEN NULL ELSE t.lease_expires_at END
    WHERE t.tenant = excluded.tenant AND t.principal = excluded.principal
      AND t.status IN ('working', 'input_required')
  `;

export const inFlightByTenantStatement = (p: { atMost: number; tenants: readonly string[] }) =>
  sql<{ tenant: string; in_flight: string }>`
    SELECT t.tenant, (
      SELECT count(*) FROM (
        SELECT 1 FROM tasks
        WHERE tasks.tenant = t.tenant AND status IN ('working', 'input_required')
        LIMIT ${p.atMost}
      ) AS capped
    ) AS in_flight
    FROM unnest(${p.tenants}::text[]) AS t(tenant)
  `;

/**
 * The create's text, written once like the poll's (task-view.ts): compiled per call, a 2 KB text
 * would be rebuilt and flattened for every create, copies that live long enough to be promoted to
 * the old generation.
 */
export const insertTasksText = (returning: string): string => `
    WITH input AS (
      SELECT id, tenant, principal, method, tool_name, arguments, ttl_ms, poll_interval_ms,
             status_message, trace_context
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[],
                  $7::bigint[], $8::integer[], $9::text[], $10::jsonb[])
        AS i(id, tenant, principal, method, tool_name, arguments, ttl_ms, poll_interval_ms,
             status_message, trace_context)
    ),
    inserted AS (
      INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, ttl_ms,
                         poll_interval_ms, status_message, trace_context)
      SELECT id, tenant, principal, method, tool_name, arguments, ttl_ms, poll_interval_ms,
             status_message, trace_context FROM input
      ON CONFLICT (id) DO NOTHING
      RETURNING ${returning}
    )
    SELECT ${returning}, true AS created FROM inserted
    UNION ALL
    SELECT ${returning}, false AS created FROM tasks
    WHERE (SELECT count(*) FROM inserted) < (SELECT count(*) FROM input)
      AND tasks.id IN (SELECT id FROM input)
  `;

/** Keeps an attempt span's traceparent on the row, under the fence (rows/trace-context.ts). */
export const RECORD_ATTEMPT = `UPDATE tasks SET trace_last_attempt = $3
  WHERE id = $1 AND lease_epoch = $2 AND status = 'working' AND lease_owner IS NOT NULL`;
