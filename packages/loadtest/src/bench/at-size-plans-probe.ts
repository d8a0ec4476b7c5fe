/**
 * The plans of the statements that must stay index-driven at size (issue 25 item 3): ROWS
 * completed tasks inside retention (default 2,000,000), plus 1,000 each of waiting, expired and
 * past-retention tasks, after VACUUM ANALYZE; EXPLAIN (ANALYZE, BUFFERS) of the KEDA count, the
 * sweeper's expire and delete batches (from the start and resumed), the orphan scan's halves and
 * a tasks/get read, each written as the store writes it.
 *
 *   ROWS=2000000 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     packages/loadtest/src/bench/at-size-plans-probe.ts
 */
import { createDb, migrateToLatest } from '@mcp-tasks/store';
import { createTestDatabase } from '@mcp-tasks/testing';
import pg from 'pg';

const rows = Number(process.env.ROWS ?? 2_000_000);
const database = await createTestDatabase('at_size_plans');
const client = new pg.Client({ connectionString: database.connectionString });
try {
  const db = createDb({ connectionString: database.connectionString, statementTimeoutMs: 0 });
  await migrateToLatest(db);
  await db.destroy();
  await client.connect();
  const started = performance.now();
  await client.query('SET session_replication_role = replica');
  const insert = (prefix: string, count: number, status: string, extra: string, created: string) =>
    client.query(
      `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, result, error,
                          created_at, last_updated_at, ttl_ms, expires_at, attempts)
       SELECT '${prefix}-' || g, 'tenant-' || (g % 50), 'p', 'tools/call', 'generate_report',
              '{"rows": 10}'::jsonb, '${status}', ${extra},
              ${created}, ${created}, 86400000, ${created} + interval '1 day',
              CASE WHEN '${status}' = 'working' THEN 0 ELSE 1 END
       FROM generate_series(1, ${count}) AS g`,
    );
  await insert(
    'kept',
    rows,
    'completed',
    `'{"content": []}'::jsonb, NULL`,
    `now() - interval '1 hour' + g * interval '1 microsecond'`,
  );
  await insert('waiting', 1_000, 'working', 'NULL, NULL', `now() - interval '1 minute'`);
  await insert('expired', 1_000, 'working', 'NULL, NULL', `now() - interval '2 days'`);
  await insert(
    'gone',
    1_000,
    'failed',
    `NULL, '{"code": -32603, "message": "x"}'::jsonb`,
    `now() - interval '3 days'`,
  );
  await client.query('RESET session_replication_role');
  await client.query('VACUUM ANALYZE tasks');
  const size = await client.query<{ heap: string; indexes: string }>(
    `SELECT pg_size_pretty(pg_table_size('tasks')) AS heap, pg_size_pretty(pg_indexes_size('tasks')) AS indexes`,
  );
  console.log(
    `${rows + 3_000} rows written and vacuumed in ${((performance.now() - started) / 1_000).toFixed(0)} s; table ${size.rows[0]!.heap}, indexes ${size.rows[0]!.indexes}`,
  );
  const expireFrom = `(SELECT id FROM tasks WHERE status IN ('working', 'input_required') AND expires_at <= now() %FROM% ORDER BY expires_at LIMIT 1000 FOR UPDATE SKIP LOCKED)`;
  const deleteFrom = `(SELECT id FROM tasks WHERE status IN ('completed', 'failed', 'cancelled') AND expires_at <= now() - interval '1 day' %FROM% ORDER BY expires_at LIMIT 1000 FOR UPDATE SKIP LOCKED)`;
  const statements: Record<string, string> = {
    'KEDA count': `SELECT count(*) FROM tasks WHERE status = 'working'`,
    'expire batch, from the start': `UPDATE tasks SET status = 'failed', error = '{"code": -32603, "message": "task expired"}', status_message = 'task expired', input_requests = '{}', lease_owner = NULL, lease_expires_at = NULL WHERE id IN ${expireFrom.replace('%FROM%', '')} AND status IN ('working', 'input_required') RETURNING id, expires_at`,
    'expire batch, resumed': `UPDATE tasks SET status = 'failed', error = '{"code": -32603, "message": "task expired"}', status_message = 'task expired', input_requests = '{}', lease_owner = NULL, lease_expires_at = NULL WHERE id IN ${expireFrom.replace('%FROM%', `AND expires_at >= now() - interval '2 days'`)} AND status IN ('working', 'input_required') RETURNING id, expires_at`,
    'delete batch, from the start': `DELETE FROM tasks WHERE id IN ${deleteFrom.replace('%FROM%', '')} RETURNING expires_at`,
    'delete batch, resumed': `DELETE FROM tasks WHERE id IN ${deleteFrom.replace('%FROM%', `AND expires_at >= now() - interval '4 days'`)} RETURNING expires_at`,
    'orphans, unheld half': `SELECT id FROM tasks WHERE status = 'working' AND lease_owner IS NULL AND coalesce(enqueued_at, last_updated_at) <= now() - interval '10 seconds' ORDER BY coalesce(enqueued_at, last_updated_at) LIMIT 1000`,
    'orphans, held half': `SELECT id FROM tasks WHERE status = 'working' AND lease_owner IS NOT NULL AND lease_expires_at <= now() AND coalesce(enqueued_at, last_updated_at) <= now() - interval '10 seconds' ORDER BY lease_expires_at LIMIT 1000`,
    'tasks/get by id': `SELECT * FROM tasks WHERE id = 'kept-1234567' AND tenant = 'tenant-17' AND principal = 'p'`,
  };
  for (const [name, statement] of Object.entries(statements)) {
    await client.query('BEGIN');
    const plan = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${statement}`,
    );
    await client.query('ROLLBACK');
    console.log(`\n-- ${name}\n${plan.rows.map((row) => row['QUERY PLAN']).join('\n')}`);
  }
} finally {
  await client.end();
  await database.drop();
}
