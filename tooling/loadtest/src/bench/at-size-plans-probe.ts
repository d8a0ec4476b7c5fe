/**
 * The plans of the statements that must stay index-driven at size (issue 25 item 3): ROWS
 * completed tasks inside retention (default 2,000,000), plus 1,000 each of waiting, expired and
 * past-retention tasks, after VACUUM ANALYZE; EXPLAIN (ANALYZE, BUFFERS) of the KEDA count, the
 * sweeper's expire and delete batches (from the start and resumed), the orphan scan's halves and
 * a tasks/get read, each written as the store writes it.
 *
 *   ROWS=2000000 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/at-size-plans-probe.ts
 */
import { createDb, migrateToLatest } from '@mcp-tasks/store';
import { createTestDatabase } from '@mcp-tasks/testing';
import pg from 'pg';
import { addSweeperWork, explainAtSize, fillRetainedTasks } from './at-size-statements.js';

const rows = Number(process.env.ROWS ?? 2_000_000);
const database = await createTestDatabase('at_size_plans');
const client = new pg.Client({ connectionString: database.connectionString });
try {
  const db = createDb({ connectionString: database.connectionString, statementTimeoutMs: 0 });
  await migrateToLatest(db);
  await db.destroy();
  await client.connect();
  const started = performance.now();
  await fillRetainedTasks(client, rows, (line) => console.log(line));
  await addSweeperWork(client);
  const size = await client.query<{ heap: string; indexes: string }>(
    `SELECT pg_size_pretty(pg_table_size('tasks')) AS heap, pg_size_pretty(pg_indexes_size('tasks')) AS indexes`,
  );
  console.log(
    `${rows + 3_000} rows written and vacuumed in ${((performance.now() - started) / 1_000).toFixed(0)} s; table ${size.rows[0]!.heap}, indexes ${size.rows[0]!.indexes}`,
  );
  for (const plan of await explainAtSize(client))
    console.log(`\n-- ${plan.name}\n${plan.plan.join('\n')}`);
} finally {
  await client.end();
  await database.drop();
}
