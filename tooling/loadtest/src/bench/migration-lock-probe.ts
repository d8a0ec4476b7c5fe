/**
 * How long each migration takes on a big `tasks` table, and how long it blocks the service: on a
 * database at migration 0001 holding ROWS retained completed tasks (plus 4,000 working and
 * input_required ones), applies each later migration alone through the store's own migrator
 * (migrateTo), while one connection writes every 20 ms (a create and a touch of a working task)
 * and another reads a task by id every 20 ms, neither with a lock_timeout. Prints, per migration:
 * wall time, the longest write and the longest read. Then, on a fresh copy of the same fill, the
 * whole upgrade an operator runs (migrateToLatest from 0001), with the same two figures.
 *
 * The fill is written once into a template database (TEMPLATE=name keeps it between runs, so a
 * before/after comparison starts from the same rows; DROP_TEMPLATE=1 drops it at the end).
 *
 *   ROWS=10000000 TEMPLATE=mcpt_migration_probe_10m \
 *     pnpm exec tsx --conditions=@mcp-tasks/source tooling/loadtest/src/bench/migration-lock-probe.ts
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { MIGRATIONS, createDb, migrateTo, migrateToLatest } from '@mcp-tasks/store';
import pg from 'pg';

const rows = Number(process.env.ROWS ?? 1_000_000);
const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const template = process.env.TEMPLATE ?? `mcpt_migration_probe_${rows}`;
const FIRST = '0001_create_tasks';
const INTERVAL_MS = 20;

const urlOf = (name: string): string => {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
};
const log = (line: string): void => console.log(`[${new Date().toISOString()}] ${line}`);

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Rows of the 0001 schema: only its columns, triggers off (history, not new events). */
async function fill(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query('SET session_replication_role = replica');
    const chunk = 1_000_000;
    for (let from = 1; from <= rows; from += chunk) {
      const to = Math.min(rows, from + chunk - 1);
      await client.query(
        `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, result,
                            created_at, last_updated_at, ttl_ms, expires_at, attempts)
         SELECT 'kept-' || g, 'tenant-' || (g % 50), 'p', 'tools/call', 'generate_report',
                '{"rows": 10}'::jsonb, 'completed', '{"content": []}'::jsonb,
                now() - interval '1 hour' + g * interval '100 microseconds',
                now() - interval '1 hour' + g * interval '100 microseconds', 86400000,
                now() + interval '23 hours' + g * interval '100 microseconds', 1
         FROM generate_series(${from}, ${to}) AS g`,
      );
      log(`${to} of ${rows} retained rows written`);
    }
    // 2,000 waiting, 1,000 held by a worker, 1,000 waiting for input.
    await client.query(
      `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, created_at,
                          last_updated_at, ttl_ms, expires_at, attempts, lease_owner,
                          lease_expires_at, lease_epoch, input_requests)
       SELECT 'active-' || g, 'tenant-' || (g % 50), 'p', 'tools/call', 'generate_report',
              '{"rows": 10}'::jsonb, CASE WHEN g > 3000 THEN 'input_required' ELSE 'working' END,
              now() - interval '1 minute', now() - interval '1 minute', 86400000,
              now() + interval '1 day', CASE WHEN g > 2000 THEN 1 ELSE 0 END,
              CASE WHEN g BETWEEN 2001 AND 3000 THEN 'worker-1' END,
              CASE WHEN g BETWEEN 2001 AND 3000 THEN now() + interval '1 hour' END,
              CASE WHEN g > 2000 THEN 1 ELSE 0 END,
              CASE WHEN g > 3000 THEN '{"answer": {"message": "?"}}'::jsonb ELSE '{}'::jsonb END
       FROM generate_series(1, 4000) AS g`,
    );
    await client.query('RESET session_replication_role');
    await client.query('VACUUM ANALYZE tasks');
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}

async function templateReady(): Promise<void> {
  const exists = await admin(
    async (client) =>
      (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template])).rowCount,
  );
  if (exists === 1) return log(`reusing template ${template}`);
  await admin((client) => client.query(`CREATE DATABASE "${template}"`));
  const db = createDb({ connectionString: urlOf(template), statementTimeoutMs: 0, max: 2 });
  await migrateTo(db, FIRST);
  await db.destroy();
  const started = performance.now();
  await fill(urlOf(template));
  log(`template ${template} filled in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

async function copyOfTemplate(label: string): Promise<string> {
  const name = `mcpt_migration_probe_${label}_${process.pid}`;
  await admin(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${name}"`);
    await client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
  });
  return name;
}

/** One connection doing `statement` every 20 ms; the longest it waited since the last reset. */
async function startLoop(connectionString: string, statement: (n: number) => string) {
  const client = new pg.Client({ connectionString });
  await client.connect();
  await client.query(`SET lock_timeout = 0; SET statement_timeout = 0`);
  let longest = 0;
  let running = true;
  let n = 0;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await client.query(statement(n++));
      longest = Math.max(longest, performance.now() - started);
      await sleep(INTERVAL_MS);
    }
  })();
  return {
    takeLongest(): number {
      const value = longest;
      longest = 0;
      return value;
    },
    async stop(): Promise<void> {
      running = false;
      await loop;
      await client.end();
    },
  };
}

async function startTraffic(connectionString: string) {
  const writes = await startLoop(
    connectionString,
    (n) => `
      INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments)
      VALUES ('probe-${process.pid}-${n}', 'tenant-1', 'p', 'tools/call', 'generate_report', '{}');
      UPDATE tasks SET status_message = 'step ${n}' WHERE id = 'active-${1 + (n % 2000)}'`,
  );
  const reads = await startLoop(
    connectionString,
    (n) => `SELECT * FROM tasks WHERE id = 'kept-${1 + ((n * 7919) % rows)}'`,
  );
  return { writes, reads };
}

interface Row {
  migration: string;
  seconds: number;
  writeMs: number;
  readMs: number;
}

async function measure(
  connectionString: string,
  traffic: Awaited<ReturnType<typeof startTraffic>>,
  migration: string,
  run: () => Promise<unknown>,
): Promise<Row> {
  await sleep(200);
  traffic.writes.takeLongest();
  traffic.reads.takeLongest();
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  await sleep(100);
  const row = {
    migration,
    seconds,
    writeMs: traffic.writes.takeLongest(),
    readMs: traffic.reads.takeLongest(),
  };
  log(`${migration}: ${JSON.stringify(row)} (${connectionString.split('/').pop()})`);
  return row;
}

function printTable(title: string, table: Row[]): void {
  console.log(`\n${title}`);
  console.log('| migration | seconds | longest write wait | longest read wait |');
  console.log('|---|--:|--:|--:|');
  for (const row of table)
    console.log(
      `| ${row.migration} | ${row.seconds.toFixed(1)} | ${(row.writeMs / 1000).toFixed(2)} s | ${(row.readMs / 1000).toFixed(2)} s |`,
    );
}

async function probe(label: string, step: boolean): Promise<Row[]> {
  const name = await copyOfTemplate(label);
  const connectionString = urlOf(name);
  const db = createDb({ connectionString, statementTimeoutMs: 0, max: 2 });
  const traffic = await startTraffic(connectionString);
  const table: Row[] = [];
  try {
    if (step)
      for (const migration of Object.keys(MIGRATIONS).filter((m) => m > FIRST))
        table.push(
          await measure(connectionString, traffic, migration, () => migrateTo(db, migration)),
        );
    else
      table.push(
        await measure(connectionString, traffic, 'all (migrateToLatest)', () =>
          migrateToLatest(db),
        ),
      );
  } finally {
    await traffic.writes.stop();
    await traffic.reads.stop();
    await db.destroy();
    await admin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  }
  return table;
}

await templateReady();
const steps = await probe('steps', true);
const whole = await probe('whole', false);
printTable(`${rows} rows, each migration alone`, steps);
printTable(`${rows} rows, 0001 to latest in one run`, whole);
if (process.env.DROP_TEMPLATE === '1')
  await admin((client) => client.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`));
