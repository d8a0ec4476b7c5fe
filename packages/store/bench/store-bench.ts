/**
 * Store benchmark: `pnpm --filter @mcp-tasks/store bench` (BENCH_TASKS=500 by default).
 * On a fresh throwaway database it times, one task at a time, createTask, claimLease,
 * claimFairly (the worker's claim, on a backlog of two tenants) and completeTask, and next to them a raw single-row INSERT into a plain table: the floor one round
 * trip and one commit cost on this server. Prints latencies, round trips per task and the ratio to
 * the baseline. Nothing is asserted: the numbers are for reading, not for gating.
 */
import { sql } from 'kysely';
import { newTaskId } from '@mcp-tasks/tasks';
import { createTestDatabase } from '@mcp-tasks/testing';
import { createDb } from '../src/db/database.js';
import { claimFairly, claimLease } from '../src/lease/lease.js';
import { completeTask } from '../src/lease/fenced-task-writes.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createTask } from '../src/rows/task-repository.js';

const tasks = Number(process.env.BENCH_TASKS ?? 500);
if (!Number.isInteger(tasks) || tasks <= 0)
  throw new Error('BENCH_TASKS must be a positive integer');

interface Measured {
  name: string;
  samples: number[];
  roundTrips: number;
  transactions: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const database = await createTestDatabase('bench');
let statements = 0;
// Transactions, counted from the same query log: an explicit BEGIN..COMMIT is one, and so is every
// statement outside one (autocommit). Sound because the bench uses one connection at a time.
let transactions = 0;
let inTransaction = false;
const db = createDb({
  connectionString: database.connectionString,
  max: 4,
  applicationName: 'mcp-tasks bench',
  log: (event) => {
    if (event.level !== 'query') return;
    statements += 1;
    const verb = event.query.sql.trim().split(/\s+/)[0]?.toLowerCase();
    if (verb === 'begin' || verb === 'start') {
      inTransaction = true;
      transactions += 1;
    } else if (verb === 'commit' || verb === 'rollback') {
      inTransaction = false;
    } else if (!inTransaction) {
      transactions += 1;
    }
  },
});

const benchTask = (id: string, tenant: string) => ({
  id,
  owner: { tenant, principal: 'bench' },
  operation: {
    method: 'tools/call' as const,
    toolName: 'slow_compute',
    arguments: { seconds: 1 },
  },
  ttlMs: 3_600_000,
  pollIntervalMs: 1_000,
  statusMessage: null,
});

async function measure(
  name: string,
  count: number,
  step: (i: number) => Promise<unknown>,
): Promise<Measured> {
  const samples: number[] = [];
  const before = statements;
  const transactionsBefore = transactions;
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await step(i);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return {
    name,
    samples,
    roundTrips: (statements - before) / count,
    transactions: (transactions - transactionsBefore) / count,
  };
}

try {
  await migrateToLatest(db);
  await sql`CREATE TABLE bench_baseline (id text PRIMARY KEY, payload jsonb NOT NULL)`.execute(db);
  // Warm the pool and the plans so the first samples do not measure connection setup.
  for (let i = 0; i < 20; i++) {
    await sql`INSERT INTO bench_baseline VALUES (${`warm-${i}`}, '{}'::jsonb)`.execute(db);
  }

  const ids = Array.from({ length: tasks }, () => newTaskId());
  const fences: { taskId: string; epoch: number }[] = [];
  const results: Measured[] = [];
  results.push(
    await measure('raw INSERT (baseline)', tasks, (i) =>
      sql`INSERT INTO bench_baseline VALUES (${ids[i]!}, ${JSON.stringify({ seconds: 1 })}::jsonb)`.execute(
        db,
      ),
    ),
  );
  results.push(
    await measure('createTask', tasks, (i) => createTask(db, benchTask(ids[i]!, 'bench'))),
  );
  results.push(
    await measure('claimLease', tasks, async (i) => {
      const claim = await claimLease(db, ids[i]!, 'bench-worker', 60_000);
      if (claim === null) throw new Error(`task ${ids[i]} not claimable`);
      fences.push(claim.fence);
    }),
  );
  // The worker's claim, each wake-up naming its own task, on a backlog two tenants share.
  const backlog = Array.from({ length: tasks }, () => newTaskId());
  for (const [i, id] of backlog.entries())
    await createTask(db, benchTask(id, i % 2 === 0 ? 'bench' : 'other'));
  results.push(
    await measure('claimFairly', tasks, async (i) => {
      const [claim] = await claimFairly(db, [backlog[i]!], 'bench-worker', 60_000);
      if (claim === null || claim === undefined) throw new Error('nothing claimable');
    }),
  );
  results.push(
    await measure('completeTask', tasks, (i) =>
      completeTask(db, fences[i]!, { content: [{ type: 'text', text: 'done' }] }),
    ),
  );

  const baseline = results[0]!;
  const baseP50 = percentile(
    [...baseline.samples].sort((a, b) => a - b),
    50,
  );
  const rows = results.map((r) => {
    const sorted = [...r.samples].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    return {
      operation: r.name,
      n: r.samples.length,
      'p50 ms': p50.toFixed(3),
      'p99 ms': percentile(sorted, 99).toFixed(3),
      'mean ms': (r.samples.reduce((a, b) => a + b, 0) / r.samples.length).toFixed(3),
      'round trips/task': r.roundTrips.toFixed(2),
      'transactions/task': r.transactions.toFixed(2),
      'p50 / baseline': `${(p50 / baseP50).toFixed(2)}x`,
    };
  });
  const version = await sql<{ v: string }>`SELECT current_setting('server_version') AS v`.execute(
    db,
  );
  console.log(
    `\nstore benchmark: ${tasks} tasks, sequential, one connection in use at a time, Postgres ${version.rows[0]?.v}`,
  );
  console.table(rows);
  // One claim per task: the worker's (claimFairly); claimLease is the same claim by id, for comparison.
  const lifecycle = results.slice(1).filter((r) => r.name !== 'claimLease');
  const sum = (pick: (r: Measured) => number) => lifecycle.reduce((a, r) => a + pick(r), 0);
  console.log(
    `lifecycle (create + claim + complete): ${sum((r) => r.roundTrips).toFixed(2)} round trips and ` +
      `${sum((r) => r.transactions).toFixed(2)} transactions per task (measured from the query log); ` +
      'createTask is one INSERT (a replica, when configured, is asked for the row itself: see replica.ts).',
  );
} finally {
  await db.destroy();
  await database.drop();
}
