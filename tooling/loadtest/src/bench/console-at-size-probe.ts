/**
 * The console's list and search at size (issue 27 item 2): ROWS tasks (default 10,000,000) over
 * 50 tenants and 4 tools, created over the last 30 days, written with the triggers off (the
 * events table plays no part in a list), then VACUUM ANALYZE. For each console read, as the store
 * writes it (listTasksForOperator, countTasksForOperator; the SQL captured from Kysely's log),
 * the plan (EXPLAIN ANALYZE, BUFFERS) and the median of 5 timed runs: the first page, a deep
 * keyset page, filtered pages (tenant, status, tool, time range), and searches (a rare and a
 * common term, alone and behind a filter; bounded to SEARCH_SCAN_ROWS rows a page), and once the
 * unbounded ILIKE the console had before.
 *
 * Then the cost a trigram index would put on the create path: the same multi-row INSERTs (200
 * rows, the create batcher's largest batch) timed with and without a GIN pg_trgm index on
 * `arguments::text`, alternating, and the searches again with the index.
 *
 * TRIGRAM=off stops after the reads.
 *
 *   ROWS=10000000 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/console-at-size-probe.ts
 */
import {
  createConsoleService,
  createDb,
  migrateToLatest,
  type Db,
  type OperatorScope,
  type TaskFilter,
} from '@mcp-tasks/store';
import { createTestDatabase } from '@mcp-tasks/testing';
import pg from 'pg';

const rows = Number(process.env.ROWS ?? 10_000_000);
const chunk = 1_000_000;
const database = await createTestDatabase('console_at_size');
const client = new pg.Client({ connectionString: database.connectionString });
const captured: { sql: string; parameters: readonly unknown[] }[] = [];
const db: Db = createDb({
  connectionString: database.connectionString,
  statementTimeoutMs: 0,
  log: (event) => {
    if (event.level === 'query')
      captured.push({ sql: event.query.sql, parameters: event.query.parameters });
  },
});

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** Runs `read` 5 times (after one warm-up) and prints its median time and its plan. */
async function measure(name: string, read: () => Promise<unknown>): Promise<void> {
  await read();
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await read();
    times.push(performance.now() - started);
  }
  captured.length = 0;
  await read();
  const statement = captured.at(-1);
  if (statement === undefined) throw new Error(`${name}: no statement captured`);
  const plan = await client.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${statement.sql}`,
    statement.parameters as unknown[],
  );
  console.log(`\n-- ${name}: median ${median(times).toFixed(1)} ms of 5`);
  console.log(plan.rows.map((row) => `   ${row['QUERY PLAN']}`).join('\n'));
}

const service = createConsoleService({ db, wakeResumed: () => Promise.resolve() });

async function reads(label: string): Promise<void> {
  const all: OperatorScope = { tenant: null };
  const page = { limit: 50 };
  const list = (filter: TaskFilter, scope: OperatorScope = all) =>
    service.listTasks(scope, filter, page).then((result) => result.rows.length);
  const deep = await client.query<{ created_at: string; id: string }>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at, id FROM tasks ORDER BY created_at DESC, id DESC OFFSET ${Math.floor(rows * 0.9)} LIMIT 1`,
  );
  const cursor = { createdAt: deep.rows[0]!.created_at, id: deep.rows[0]!.id };
  const week = {
    createdFrom: new Date(Date.now() - 8 * 86_400_000),
    createdTo: new Date(Date.now() - 7 * 86_400_000),
  };
  console.log(`\n==== ${label}`);
  await measure('first page, all tenants', () => list({}));
  await measure('deep keyset page (90 % down), all tenants', () =>
    service.listTasks(all, {}, { limit: 50, cursor }),
  );
  await measure('first page, one tenant (operator scope)', () => list({}, { tenant: 'tenant-7' }));
  await measure('status = working (rare: 0.1 %)', () => list({ statuses: ['working'] }));
  await measure('tool = slow_compute, one tenant', () =>
    list({ tool: 'slow_compute' }, { tenant: 'tenant-7' }),
  );
  await measure('one day a week ago', () => list(week));
  await measure('search, common term ("city-1")', () => list({ search: 'city-1' }));
  await measure('search, rare term (one task: "order-4242")', () => list({ search: 'order-4242' }));
  await measure('search, rare term, one tenant', () =>
    list({ search: 'order-4242' }, { tenant: 'tenant-42' }),
  );
  await measure('search, no match', () => list({ search: 'no-such-text' }));
  // The unbounded form the console had before (ILIKE on the whole keyset scan), once.
  for (const term of ['order-4242', 'no-such-text']) {
    const started = performance.now();
    const plan = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT id, created_at FROM tasks
       WHERE (arguments::text ILIKE '%${term}%' OR status_message ILIKE '%${term}%')
       ORDER BY created_at DESC, id DESC LIMIT 51`,
    );
    console.log(
      `\n-- unbounded search "${term}" (the earlier form), one run: ${(performance.now() - started).toFixed(0)} ms`,
    );
    console.log(plan.rows.map((row) => `   ${row['QUERY PLAN']}`).join('\n'));
  }
  await measure('bulk-cancel preview count (unfinished tasks), all tenants', () =>
    service.countCancellable(all, {}),
  );
}

/** 40 alternating rounds of one 200-row INSERT each, through the real triggers. */
async function insertCost(round: number): Promise<number> {
  const started = performance.now();
  await client.query(
    `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, created_at,
                        last_updated_at, ttl_ms, expires_at)
     SELECT 'ins-${round}-' || g, 'tenant-' || (g % 50), 'p', 'tools/call', 'slow_compute',
            jsonb_build_object('city', 'city-' || (g % 1000), 'order', 'order-new-${round}-' || g,
                               'note', 'a short free-text note of about sixty characters, say'),
            'working', now(), now(), 3600000, now() + interval '1 hour'
     FROM generate_series(1, 200) AS g`,
  );
  return performance.now() - started;
}

/** The create path's cost of a trigram index on the arguments, and the searches it serves. */
async function trigramCost(): Promise<void> {
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  // Sequential, not interleaved (building the index takes minutes): 20 rounds without, then 20
  // with, each after 2 warm-up rounds. On a shared machine, read the ratio with that in mind.
  const without: number[] = [];
  const withIndex: number[] = [];
  for (let round = 0; round < 22; round++) {
    const took = await insertCost(round);
    if (round >= 2) without.push(took);
  }
  const building = performance.now();
  await client.query(
    'CREATE INDEX tasks_search_trgm ON tasks USING gin ((arguments::text) gin_trgm_ops)',
  );
  console.log(
    `\nGIN pg_trgm index on arguments::text built in ${((performance.now() - building) / 1_000).toFixed(0)} s`,
  );
  await client.query('ANALYZE tasks');
  for (let round = 100; round < 122; round++) {
    const took = await insertCost(round);
    if (round >= 102) withIndex.push(took);
  }
  for (const term of ['order-4242', 'city-1']) {
    const plan = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT id, created_at FROM tasks
       WHERE arguments::text ILIKE '%${term}%' ORDER BY created_at DESC, id DESC LIMIT 51`,
    );
    console.log(`\n-- search "${term}" over arguments::text with the trigram index`);
    console.log(plan.rows.map((row) => `   ${row['QUERY PLAN']}`).join('\n'));
  }
  console.log(
    `200-row INSERT through the triggers, median of 20: without the trigram index ${median(without).toFixed(1)} ms, with ${median(withIndex).toFixed(1)} ms (${((median(withIndex) / median(without) - 1) * 100).toFixed(0)} %)`,
  );
  const indexSize = await client.query<{ size: string }>(
    `SELECT pg_size_pretty(pg_relation_size('tasks_search_trgm')) AS size`,
  );
  console.log(`trigram index size: ${indexSize.rows[0]!.size}`);
}

try {
  await migrateToLatest(db);
  await client.connect();
  const started = performance.now();
  await client.query('SET session_replication_role = replica');
  const tools = `(ARRAY['slow_compute', 'generate_report', 'ask_user', 'fetch_page'])[1 + g % 4]`;
  for (let from = 1; from <= rows; from += chunk) {
    const to = Math.min(rows, from + chunk - 1);
    await client.query(
      `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status,
                          status_message, result, created_at, last_updated_at, ttl_ms, expires_at,
                          attempts)
       SELECT 'tsk-' || g, 'tenant-' || (g % 50), 'p', 'tools/call', ${tools},
              jsonb_build_object('city', 'city-' || (g % 1000), 'order', 'order-' || g),
              CASE WHEN g % 1000 = 0 THEN 'working' ELSE 'completed' END,
              'step ' || (g % 10) || ' done',
              CASE WHEN g % 1000 = 0 THEN NULL ELSE '{"content": []}'::jsonb END,
              now() - interval '30 days' + g * (interval '30 days' / ${rows}),
              now() - interval '30 days' + g * (interval '30 days' / ${rows}),
              2000000000, now() + interval '30 days', 1
       FROM generate_series(${from}, ${to}) AS g`,
    );
    console.log(`${to} rows (${((performance.now() - started) / 1_000).toFixed(0)} s)`);
  }
  await client.query('RESET session_replication_role');
  await client.query('VACUUM ANALYZE tasks');
  const size = await client.query<{ heap: string; indexes: string }>(
    `SELECT pg_size_pretty(pg_table_size('tasks')) AS heap, pg_size_pretty(pg_indexes_size('tasks')) AS indexes`,
  );
  console.log(
    `${rows} rows written and vacuumed in ${((performance.now() - started) / 1_000).toFixed(0)} s; table ${size.rows[0]!.heap}, indexes ${size.rows[0]!.indexes}`,
  );
  await reads('no search index (ILIKE on the keyset scan)');

  if (process.env.TRIGRAM !== 'off') await trigramCost();
} finally {
  await db.destroy();
  await client.end();
  await database.drop();
}
