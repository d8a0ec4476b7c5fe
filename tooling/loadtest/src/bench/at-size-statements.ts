import type pg from 'pg';

/**
 * The statements that must stay index-driven however large `tasks` grows (issue 25 item 3):
 * the KEDA scaler's count, the sweeper's expire and delete batches (from the start and resumed),
 * the orphan scan's halves and a tasks/get read, each as the store writes it.
 */
const expireFrom = (resume: string) =>
  `(SELECT id FROM tasks WHERE status IN ('working', 'input_required') AND expires_at <= now() ${resume} ORDER BY expires_at LIMIT 1000 FOR UPDATE SKIP LOCKED)`;
const deleteFrom = (resume: string) =>
  `(SELECT id FROM tasks WHERE status IN ('completed', 'failed', 'cancelled') AND expires_at <= now() - interval '1 day' ${resume} ORDER BY expires_at LIMIT 1000 FOR UPDATE SKIP LOCKED)`;
const EXPIRE_SET = `status = 'failed', error = '{"code": -32603, "message": "task expired"}', status_message = 'task expired', input_requests = '{}', lease_owner = NULL, lease_expires_at = NULL`;

export const AT_SIZE_STATEMENTS: Readonly<Record<string, string>> = {
  'KEDA count': `SELECT count(*) FROM tasks WHERE status = 'working'`,
  'expire batch, from the start': `UPDATE tasks SET ${EXPIRE_SET} WHERE id IN ${expireFrom('')} AND status IN ('working', 'input_required') RETURNING id, expires_at`,
  'expire batch, resumed': `UPDATE tasks SET ${EXPIRE_SET} WHERE id IN ${expireFrom(`AND expires_at >= now() - interval '2 days'`)} AND status IN ('working', 'input_required') RETURNING id, expires_at`,
  'delete batch, from the start': `DELETE FROM tasks WHERE id IN ${deleteFrom('')} RETURNING expires_at`,
  'delete batch, resumed': `DELETE FROM tasks WHERE id IN ${deleteFrom(`AND expires_at >= now() - interval '4 days'`)} RETURNING expires_at`,
  'orphans, unheld half': `SELECT id FROM tasks WHERE status = 'working' AND lease_owner IS NULL AND unheld_due_at <= now() - interval '10 seconds' ORDER BY unheld_due_at LIMIT 1000`,
  'orphans, held half': `SELECT id FROM tasks WHERE status = 'working' AND lease_owner IS NOT NULL AND lease_expires_at <= now() AND coalesce(enqueued_at, last_updated_at) <= now() - interval '10 seconds' ORDER BY lease_expires_at LIMIT 1000`,
  'tasks/get by id': `SELECT * FROM tasks WHERE id = 'kept-1234567' AND tenant = 'tenant-17' AND principal = 'p'`,
};

export interface StatementPlan {
  name: string;
  /** No sequential scan of `tasks` anywhere in the plan. */
  indexDriven: boolean;
  milliseconds: number;
  plan: string[];
}

/** EXPLAIN ANALYZE of each statement inside a transaction that is rolled back. */
export async function explainAtSize(client: pg.Client): Promise<StatementPlan[]> {
  const plans: StatementPlan[] = [];
  for (const [name, statement] of Object.entries(AT_SIZE_STATEMENTS)) {
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${statement}`,
      );
      const plan = rows.map((row) => row['QUERY PLAN']);
      const time = plan.map((line) => /Execution Time: ([\d.]+) ms/.exec(line)).find(Boolean);
      plans.push({
        name,
        indexDriven: !plan.some((line) => /Seq Scan on tasks\b/.test(line)),
        milliseconds: Number(time?.[1] ?? Number.NaN),
        plan,
      });
    } finally {
      await client.query('ROLLBACK');
    }
  }
  return plans;
}

const insertTasks = (
  client: pg.Client,
  prefix: string,
  range: [number, number],
  status: string,
  resultAndError: string,
  created: string,
) =>
  client.query(
    `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, result, error,
                        created_at, last_updated_at, ttl_ms, expires_at, attempts, unheld_due_at)
     SELECT '${prefix}-' || g, 'tenant-' || (g % 50), 'p', 'tools/call', 'generate_report',
            '{"rows": 10}'::jsonb, '${status}', ${resultAndError},
            ${created}, ${created}, 86400000, ${created} + interval '1 day',
            CASE WHEN '${status}' = 'working' THEN 0 ELSE 1 END,
            -- What the before-write trigger (off while filling) would set (migration 0022).
            CASE WHEN '${status}' = 'working' THEN ${created} END
     FROM generate_series(${range[0]}, ${range[1]}) AS g`,
  );

/**
 * `rows` completed tasks inside retention (created within the last hour, kept a day), then
 * VACUUM ANALYZE. Triggers are off while it fills (session_replication_role = replica): these
 * rows stand for history, not for new events.
 */
export async function fillRetainedTasks(
  client: pg.Client,
  rows: number,
  log: (line: string) => void,
): Promise<void> {
  await client.query('SET session_replication_role = replica');
  try {
    const chunk = 1_000_000;
    for (let from = 1; from <= rows; from += chunk) {
      const to = Math.min(rows, from + chunk - 1);
      await insertTasks(
        client,
        'kept',
        [from, to],
        'completed',
        `'{"content": []}'::jsonb, NULL`,
        `now() - interval '1 hour' + g * interval '100 microseconds'`,
      );
      log(`${to} of ${rows} retained rows written`);
    }
  } finally {
    await client.query('RESET session_replication_role');
  }
  await client.query('VACUUM ANALYZE tasks');
}

/** 1,000 each of waiting, expired and past-retention tasks: work the plans must find fast. */
export async function addSweeperWork(client: pg.Client): Promise<void> {
  await client.query('SET session_replication_role = replica');
  try {
    const range: [number, number] = [1, 1_000];
    await insertTasks(
      client,
      'waiting',
      range,
      'working',
      'NULL, NULL',
      `now() - interval '1 minute'`,
    );
    await insertTasks(
      client,
      'expired',
      range,
      'working',
      'NULL, NULL',
      `now() - interval '2 days'`,
    );
    await insertTasks(
      client,
      'gone',
      range,
      'failed',
      `NULL, '{"code": -32603, "message": "x"}'::jsonb`,
      `now() - interval '3 days'`,
    );
  } finally {
    await client.query('RESET session_replication_role');
  }
  await client.query('ANALYZE tasks');
}
