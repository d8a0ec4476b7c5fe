/**
 * Which updates of `tasks` are HOT (heap-only: no index entry written, old version pruned without
 * vacuum), statement by statement (issue 25, docs/adr/0010-tasks-update-in-place.md). TASKS tasks
 * go through a worker's lifecycle one phase at a time, each phase through the store's own
 * functions: the outbox mark, a fair claim, RENEWALS lease renewals, a checkpoint with its lease,
 * an input pause for half of them, the answer that resumes them, their new mark and claim,
 * another checkpoint, the settle (batched as a worker batches it) and, for one in ten created
 * with a 1 ms TTL, the sweeper's expiry instead. After each phase: that phase's `n_tup_upd` and
 * `n_tup_hot_upd` (pg_stat_user_tables); at the end dead tuples (after an ANALYZE, which counts
 * them exactly at this size), heap and index sizes, and the plan of the orphan scan's held half
 * with the expiring tenth held. No vacuum runs in the few seconds a schema takes.
 *
 * Two schemas, each on a fresh database, in turns (the order alternates every round): `main`
 * (migration 0022 undone) and `0022`.
 *
 *   TASKS=2000 RENEWALS=3 ROUNDS=2 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/hot-update-probe.ts
 */
import {
  MIGRATIONS,
  claimFairly,
  createDb,
  createTasks,
  expireTaskBatch,
  markWakeUpSent,
  migrateToLatest,
  recordInputResponses,
  renewLease,
  requestInput,
  saveCheckpoint,
  writeFinals,
  type Db,
  type Fence,
  type NewTask,
} from '@mcp-tasks/store';
import { newTaskId } from '@mcp-tasks/tasks';
import { createTestDatabase } from '@mcp-tasks/testing';
import pg from 'pg';

const taskCount = Number(process.env.TASKS ?? 2_000);
const renewals = Number(process.env.RENEWALS ?? 3);
const rounds = Number(process.env.ROUNDS ?? 2);
const LEASE_MS = 30_000;
const BATCH = 32;
const OWNER = (i: number) => ({ tenant: `tenant-${i % 10}`, principal: `user-${i % 50}` });
const WORKER = 'probe-worker';

const migration0022 = MIGRATIONS['0022_tasks_update_in_place']!;

type Variant = 'main' | '0022';
const VARIANTS: Variant[] = ['main', '0022'];

async function shapeSchema(db: Db, variant: Variant): Promise<void> {
  await migrateToLatest(db);
  if (variant === 'main') await migration0022.down!(db);
}

interface PhaseFigures {
  kind: string;
  statements: number;
  updated: number;
  hot: number;
}

interface TableFigures {
  live: number;
  dead: number;
  heap: string;
  indexes: { name: string; size: string }[];
  orphanPlan: string[];
}

const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) =>
    items.slice(i * size, (i + 1) * size),
  );

/** The `tasks` row counters of one connection, flushed and read fresh. */
async function readCounters(db: Db, monitor: pg.Client) {
  await db.selectNoFrom((eb) => eb.fn('pg_stat_force_next_flush', []).as('flushed')).execute();
  await monitor.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await monitor.query<{ upd: string; hot: string }>(
    `SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'tasks'`,
  );
  return { updated: Number(rows[0]!.upd), hot: Number(rows[0]!.hot) };
}

function newInputs(): NewTask[] {
  return Array.from({ length: taskCount }, (_, i) => ({
    id: newTaskId(),
    owner: OWNER(i),
    operation: {
      method: 'tools/call',
      toolName: 'realistic_workflow',
      arguments: { label: `run-${i}`, notes: 'x'.repeat(200) },
    },
    ttlMs: i % 10 === 0 ? 1 : 3_600_000,
    pollIntervalMs: 1_000,
    statusMessage: 'Starting',
  }));
}

/** The statements a phase runs, each returning how many statements it sent. */
function createSteps(db: Db) {
  const fences = new Map<string, Fence>();
  const claimAll = async (which: readonly string[]) => {
    let statements = 0;
    for (const batch of chunks(which, BATCH)) {
      statements += 1;
      for (const claim of await claimFairly(db, batch, WORKER, LEASE_MS))
        if (claim !== null) fences.set(claim.fence.taskId, claim.fence);
    }
    return statements;
  };
  const checkpointAll = async (which: readonly string[], step: number) => {
    for (const id of which)
      await saveCheckpoint(
        db,
        fences.get(id)!,
        { done: step, notes: 'y'.repeat(100) },
        `Step ${step} done`,
        { leaseMs: LEASE_MS },
      );
    return which.length;
  };
  const markAll = async (which: readonly string[]) => {
    for (const batch of chunks(which, 500)) await markWakeUpSent(db, batch);
    return Math.ceil(which.length / 500);
  };
  const renewAll = async (held: readonly string[]) => {
    for (let r = 0; r < renewals; r += 1)
      for (const id of held) await renewLease(db, fences.get(id)!, LEASE_MS);
    return held.length * renewals;
  };
  const pauseAll = async (paused: readonly string[]) => {
    for (const id of paused)
      await requestInput(
        db,
        fences.get(id)!,
        { approve: { method: 'elicitation/create', params: { message: 'Go on?' } } },
        { done: 1, asked: true },
        'Waiting for approval',
      );
    return paused.length;
  };
  const settleAll = async (settling: readonly string[]) => {
    const sorted = [...settling].sort();
    for (const batch of chunks(sorted, BATCH))
      await writeFinals(
        db,
        batch.map((id) => ({
          fence: fences.get(id)!,
          write: {
            status: 'completed' as const,
            result: { content: [{ type: 'text', text: `done ${id}` }] },
            statusMessage: null,
          },
        })),
      );
    return Math.ceil(sorted.length / BATCH);
  };
  return { fences, claimAll, checkpointAll, markAll, renewAll, pauseAll, settleAll };
}

/** The lifecycle up to the settle, one phase at a time. */
async function walkLifecycle(
  db: Db,
  ids: readonly string[],
  phase: (kind: string, run: () => Promise<number>) => Promise<void>,
): Promise<void> {
  const steps = createSteps(db);
  await phase('enqueue mark', () => steps.markAll(ids));
  await phase('claim', () => steps.claimAll(ids));
  const held = [...steps.fences.keys()];
  await phase('renewal', () => steps.renewAll(held));
  await phase('checkpoint', () => steps.checkpointAll(held, 1));
  const paused = held.filter((_, i) => i % 2 === 1);
  await phase('input pause', () => steps.pauseAll(paused));
  const indexOf = new Map(ids.map((id, i) => [id, i]));
  await phase('answer (resume)', async () => {
    for (const id of paused)
      await recordInputResponses(db, OWNER(indexOf.get(id)!), id, {
        approve: { action: 'accept', content: { approved: true } },
      });
    return paused.length;
  });
  await phase('enqueue mark', () => steps.markAll(paused));
  await phase('claim', () => steps.claimAll(paused));
  await phase('checkpoint', () => steps.checkpointAll(held, 2));
  const settling = held.filter((id) => indexOf.get(id)! % 10 !== 0);
  await phase('settle', () => steps.settleAll(settling));
}

/**
 * The held half of the orphan scan with the expiring tenth still held, planned on fresh
 * statistics (autovacuum's ANALYZE would have run by now at any real size).
 */
async function planOrphanScan(monitor: pg.Client): Promise<string[]> {
  await monitor.query('ANALYZE tasks');
  const { rows: plan } = await monitor.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF)
       SELECT id FROM tasks WHERE status = 'working' AND lease_owner IS NOT NULL
         AND lease_expires_at <= now() AND coalesce(enqueued_at, last_updated_at) <= now()
       ORDER BY lease_expires_at LIMIT 1000`,
  );
  return plan.map((row) => row['QUERY PLAN']);
}

async function readTable(monitor: pg.Client, orphanPlan: string[]): Promise<TableFigures> {
  const { rows: table } = await monitor.query<{ live: string; dead: string; heap: string }>(
    `SELECT n_live_tup AS live, n_dead_tup AS dead, pg_size_pretty(pg_table_size('tasks')) AS heap
       FROM pg_stat_user_tables WHERE relname = 'tasks'`,
  );
  const { rows: indexes } = await monitor.query<{ name: string; size: string }>(
    `SELECT indexrelname AS name, pg_size_pretty(pg_relation_size(indexrelid)) AS size
       FROM pg_stat_user_indexes WHERE relname = 'tasks' ORDER BY indexrelname`,
  );
  return {
    live: Number(table[0]!.live),
    dead: Number(table[0]!.dead),
    heap: table[0]!.heap,
    indexes,
    orphanPlan,
  };
}

async function runVariant(variant: Variant): Promise<{
  phases: PhaseFigures[];
  table: TableFigures;
}> {
  const database = await createTestDatabase(`hot_${variant}`);
  // One connection: its statistics are flushed on demand before each reading.
  const db = createDb({ connectionString: database.connectionString, max: 1 });
  const monitor = new pg.Client({ connectionString: database.connectionString });
  try {
    await monitor.connect();
    await shapeSchema(db, variant);
    const counters = () => readCounters(db, monitor);
    const phases: PhaseFigures[] = [];
    const phase = async (kind: string, run: () => Promise<number>) => {
      const before = await counters();
      const statements = await run();
      const after = await counters();
      phases.push({
        kind,
        statements,
        updated: after.updated - before.updated,
        hot: after.hot - before.hot,
      });
    };

    const inputs = newInputs();
    for (const batch of chunks(inputs, 500)) await createTasks(db, batch);
    await walkLifecycle(
      db,
      inputs.map((input) => input.id),
      phase,
    );
    const orphanPlan = await planOrphanScan(monitor);
    await phase('sweeper expiry', async () => {
      let statements = 0;
      for (;;) {
        statements += 1;
        const { count } = await expireTaskBatch(db, new Date(Date.now() + 1_000), { limit: 1_000 });
        if (count < 1_000) return statements;
      }
    });

    await counters();
    return { phases, table: await readTable(monitor, orphanPlan) };
  } finally {
    await monitor.end();
    await db.destroy();
    await database.drop();
  }
}

const pct = (part: number, whole: number) =>
  whole === 0 ? '  -' : `${((100 * part) / whole).toFixed(0).padStart(3)}%`;

for (let round = 0; round < rounds; round += 1) {
  const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
  for (const variant of order) {
    const { phases, table } = await runVariant(variant);
    console.log(`\n== round ${round + 1}, schema ${variant}: ${taskCount} tasks`);
    for (const p of phases)
      console.log(
        `${p.kind.padEnd(16)} statements ${String(p.statements).padStart(5)}  n_tup_upd ${String(p.updated).padStart(5)}  n_tup_hot_upd ${String(p.hot).padStart(5)} ${pct(p.hot, p.updated)}`,
      );
    const updated = phases.reduce((sum, p) => sum + p.updated, 0);
    const hot = phases.reduce((sum, p) => sum + p.hot, 0);
    console.log(
      `all updates      n_tup_upd ${updated}  n_tup_hot_upd ${hot} ${pct(hot, updated)}; live ${table.live}, dead ${table.dead} (${pct(table.dead, table.live).trim()} of live); heap ${table.heap}`,
    );
    console.log(`indexes: ${table.indexes.map((i) => `${i.name} ${i.size}`).join(', ')}`);
    console.log(`orphan scan, held half:\n  ${table.orphanPlan.join('\n  ')}`);
  }
}
