/**
 * The orphan query's plan: `pnpm --filter @mcp-tasks/store explain-orphans` (EXPLAIN_HELD=70000
 * by default). On a throwaway database it commits that many working tasks held by live leases
 * (the common case: nothing to wake) plus 10 orphans, then prints EXPLAIN ANALYZE of the
 * sweeper's findOrphans and its time, next to the query it replaced (the baseline), so the README's plan can be re-run. Nothing is asserted.
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { newTaskId } from '@mcp-tasks/tasks';
import { createTestDatabase } from '@mcp-tasks/testing';
import { createDb } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { databaseNow, findOrphans } from '../src/sweeper/sweeper-repository.js';

const held = Number(process.env.EXPLAIN_HELD ?? 70_000);
const database = await createTestDatabase('explain');
const db = createDb({ connectionString: database.connectionString, max: 2, statementTimeoutMs: 0 });
try {
  await migrateToLatest(db);
  const ids = Array.from({ length: held }, () => newTaskId());
  await sql`
    INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, created_at,
                       enqueued_at, lease_owner, lease_expires_at, lease_epoch)
    SELECT id, 't', 'p', 'tools/call', 'slow_compute', '{}', now() - interval '1 hour',
           now() - interval '1 hour', 'w', now() + interval '1 hour', 1
    FROM unnest(${ids}::text[]) AS id`.execute(db);
  const orphans = Array.from({ length: 10 }, () => newTaskId());
  await sql`
    INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, created_at)
    SELECT id, 't', 'p', 'tools/call', 'slow_compute', '{}', now() - interval '1 hour'
    FROM unnest(${orphans}::text[]) AS id`.execute(db);
  await sql`ANALYZE tasks`.execute(db);

  const now = await databaseNow(db);
  const options = { wakeUpGraceMs: 30_000, limit: 1_000 };
  // The same statement findOrphans sends, under EXPLAIN.
  const cutoff = new Date(now.getTime() - options.wakeUpGraceMs);
  const plan = await sql<{ 'QUERY PLAN': string }>`
    EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
    SELECT id FROM (
      (SELECT id, unheld_due_at AS due FROM tasks
        WHERE status = 'working' AND lease_owner IS NULL AND unheld_due_at <= ${cutoff}
        ORDER BY unheld_due_at LIMIT ${options.limit})
      UNION ALL
      (SELECT id, lease_expires_at AS due FROM tasks
        WHERE ${true}::boolean
          AND status = 'working' AND lease_owner IS NOT NULL AND lease_expires_at <= ${now}
          AND coalesce(enqueued_at, last_updated_at) <= ${cutoff}
        ORDER BY lease_expires_at LIMIT ${options.limit})
    ) AS orphans
    ORDER BY due LIMIT ${options.limit}`.execute(db);
  console.log(`${held} held working tasks, ${orphans.length} orphans`);
  for (const row of plan.rows) console.log(row['QUERY PLAN']);
  // The baseline: the query before migration 0003 (one scan over every working row).
  const baseline = await sql<{ 'QUERY PLAN': string }>`
    EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
    SELECT id FROM tasks
    WHERE status = 'working' AND (lease_owner IS NULL OR lease_expires_at <= ${now})
      AND coalesce(enqueued_at, last_updated_at) <= ${cutoff}
    ORDER BY enqueued_at NULLS FIRST, created_at LIMIT ${options.limit}`.execute(db);
  console.log('baseline (the query before 0003):');
  for (const row of baseline.rows) console.log(row['QUERY PLAN']);
  const started = performance.now();
  const found = await findOrphans(db, now, options);
  console.log(
    `findOrphans: ${found.length} found in ${(performance.now() - started).toFixed(1)} ms`,
  );
} finally {
  await db.destroy();
  await database.drop();
}
