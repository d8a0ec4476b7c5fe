import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { newTaskId } from '@mcp-tasks/tasks';
import { alice, createStoreFixture, newTask, type StoreFixture } from '../../test/helpers.js';
import { createDb, type Db } from '../db/database.js';
import { claimFairly, claimLease, claimLeases, releaseLease, type Fence } from '../lease/lease.js';
import { requestInputs, saveCheckpoints, writeFinals } from '../lease/fenced-task-writes.js';
import { flagListenedTasksOfOwners } from '../rows/listen-repository.js';
import { createTask, withdrawTasks } from '../rows/task-repository.js';
import { markWakeUpSent } from '../wake-up/outbox.js';
import { updateInBatches } from '../migrations/online.js';

// Every statement that may wait for several `tasks` rows must take their locks in id order,
// whatever plan Postgres picks: two that took them in different orders deadlock, and Postgres
// breaks the cycle only after deadlock_timeout (1 s), failing one of them. On a small table
// Postgres joins an id list to `tasks` by hashing the list and scanning the table, so the rows
// are met in their physical order; the statements here run with the other plans turned off, on
// two tasks whose physical order is the reverse of their id order.

let fixture: StoreFixture;
/** The same database, with only hash joins and sequential scans left to the planner. */
let scanningDb: Db;
let monitor: pg.Client;

beforeAll(async () => {
  fixture = await createStoreFixture('row_lock_order');
  const url = new URL(fixture.database.connectionString);
  url.searchParams.set(
    'options',
    '-c enable_indexscan=off -c enable_bitmapscan=off -c enable_indexonlyscan=off ' +
      '-c enable_nestloop=off -c enable_mergejoin=off',
  );
  scanningDb = createDb({ connectionString: url.toString(), applicationName: 'scanning' });
  monitor = new pg.Client({ connectionString: fixture.database.connectionString });
  await monitor.connect();
  await sql`CREATE INDEX tasks_by_id_descending ON tasks (id DESC)`.execute(fixture.db);
  // Enough rows that the planner hashes the id list, not the table, in every statement.
  await sql`
    INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, ttl_ms, poll_interval_ms)
    SELECT id, 'filler', 'filler', 'tools/call', 'slow_compute', '{}', 60000, 500
    FROM unnest(${Array.from({ length: 400 }, () => newTaskId())}::text[]) AS f(id)
  `.execute(fixture.db);
});
afterAll(async () => {
  await monitor.end();
  await scanningDb.destroy();
  await fixture.close();
});

/** Two new tasks (inScanOrder stores them so that a scan meets `high` before `low`). */
async function reversedPair(): Promise<{ low: string; high: string }> {
  const [low, high] = [newTaskId(), newTaskId()].sort();
  await createTask(fixture.db, newTask({ id: high! }));
  await createTask(fixture.db, newTask({ id: low! }));
  return { low: low!, high: high! };
}

/**
 * Rewrites the table in descending id order (CLUSTER) and checks that a scan now meets `high`
 * first: the preparation's own writes (claims, releases) put new row versions wherever a page
 * had room.
 */
async function inScanOrder(pair: { low: string; high: string }): Promise<void> {
  await sql`CLUSTER tasks USING tasks_by_id_descending`.execute(fixture.db);
  const { rows } = await sql<{ id: string }>`
    SELECT id FROM tasks WHERE id = ANY(${[pair.low, pair.high]}::text[])
  `.execute(scanningDb);
  expect(rows.map((row) => row.id)).toEqual([pair.high, pair.low]);
}

/** Waits until a backend of the scanning pool waits for a lock. */
async function waitingForALock(): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    const { rows } = await monitor.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'scanning'
          AND wait_event_type = 'Lock'`,
    );
    if (rows[0]!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the statement never waited for the held row');
}

/**
 * Holds `high` in a transaction of its own, starts `statement` (which must wait for it), and
 * answers whether `low` was locked meanwhile: taken in id order, `low` is held by the waiting
 * statement; in scan order, the statement waits on `high` holding nothing.
 */
async function lowLockedWhileWaitingForHigh(
  pair: { low: string; high: string },
  statement: () => Promise<unknown>,
): Promise<boolean> {
  await inScanOrder(pair);
  const holder = new pg.Client({ connectionString: fixture.database.connectionString });
  const prober = new pg.Client({ connectionString: fixture.database.connectionString });
  await holder.connect();
  await prober.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE', [pair.high]);
    const running = statement();
    await waitingForALock();
    let lowLocked: boolean;
    try {
      await prober.query('BEGIN');
      await prober.query('SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE NOWAIT', [pair.low]);
      lowLocked = false;
    } catch (error) {
      expect((error as { code?: string }).code).toBe('55P03');
      lowLocked = true;
    } finally {
      await prober.query('ROLLBACK');
    }
    await holder.query('ROLLBACK');
    await running;
    return lowLocked;
  } finally {
    await holder.end();
    await prober.end();
  }
}

async function claimedPair(): Promise<{ low: string; high: string; fences: Fence[] }> {
  const pair = await reversedPair();
  const fences = [];
  for (const id of [pair.low, pair.high])
    fences.push((await claimLease(fixture.db, id, 'worker-a', 30_000))!.fence);
  return { ...pair, fences };
}

describe('statements that lock several tasks take the locks in id order, whatever the plan', () => {
  it('the plan these tests force meets the rows in scan order (the case they guard)', async () => {
    const pair = await reversedPair();
    await inScanOrder(pair);
    const { rows } = await sql<{ id: string }>`
      SELECT t.id FROM tasks t JOIN unnest(${[pair.low, pair.high]}::text[]) AS k(id) ON t.id = k.id
    `.execute(scanningDb);
    expect(rows.map((row) => row.id)).toEqual([pair.high, pair.low]);
  });

  it('listen flags (the gateway, several streams in one statement)', async () => {
    const pair = await reversedPair();
    const flag = () =>
      flagListenedTasksOfOwners(scanningDb, [{ owner: alice, taskIds: [pair.low, pair.high] }]);
    expect(await lowLockedWhileWaitingForHigh(pair, flag)).toBe(true);
  });

  it('shared checkpoints, pauses and last writes (the worker)', async () => {
    const checkpoints = await claimedPair();
    const save = () =>
      saveCheckpoints(
        scanningDb,
        checkpoints.fences.map((fence) => ({ fence, checkpoint: { step: 1 }, statusMessage: 's' })),
        30_000,
      );
    expect(await lowLockedWhileWaitingForHigh(checkpoints, save)).toBe(true);

    const pauses = await claimedPair();
    const park = () =>
      requestInputs(
        scanningDb,
        pauses.fences.map((fence) => ({
          fence,
          requests: { ok: { method: 'elicitation/create', params: {} } },
          checkpoint: null,
          statusMessage: 'waiting',
        })),
      );
    expect(await lowLockedWhileWaitingForHigh(pauses, park)).toBe(true);

    const finals = await claimedPair();
    const settle = () =>
      writeFinals(
        scanningDb,
        finals.fences.map((fence) => ({
          fence,
          write: { status: 'completed', result: { content: [] }, statusMessage: 'done' },
        })),
      );
    expect(await lowLockedWhileWaitingForHigh(finals, settle)).toBe(true);
  });

  it('claims of tasks claimed before (resumes, retries, takeovers), fair and by id', async () => {
    const released = async () => {
      const pair = await claimedPair();
      for (const fence of pair.fences) await releaseLease(fixture.db, fence);
      return pair;
    };
    const fair = await released();
    const claimFair = () => claimFairly(scanningDb, [fair.low, fair.high], 'worker-b', 30_000);
    expect(await lowLockedWhileWaitingForHigh(fair, claimFair)).toBe(true);

    const byId = await released();
    const claimById = () => claimLeases(scanningDb, [byId.low, byId.high], 'worker-b', 30_000);
    expect(await lowLockedWhileWaitingForHigh(byId, claimById)).toBe(true);
  });

  it("the outbox's wake-up marks and the withdrawal of failed creates", async () => {
    const marks = await reversedPair();
    const mark = () => markWakeUpSent(scanningDb, [marks.high, marks.low]);
    expect(await lowLockedWhileWaitingForHigh(marks, mark)).toBe(true);

    const withdrawn = await reversedPair();
    const withdraw = () =>
      withdrawTasks(scanningDb, [newTask({ id: withdrawn.high }), newTask({ id: withdrawn.low })]);
    expect(await lowLockedWhileWaitingForHigh(withdrawn, withdraw)).toBe(true);
  });

  it("an online migration's backfill batch (it runs beside the service)", async () => {
    const pair = await reversedPair();
    const backfill = () =>
      updateInBatches(
        // Migrations see the database untyped (they run before and across schema versions).
        scanningDb as unknown as Kysely<unknown>,
        sql<{ id: string }>`SELECT unnest(${[pair.high, pair.low]}::text[]) AS id`,
        (ids) => sql`UPDATE tasks SET enqueued_at = now() WHERE id = ANY(${ids}::text[])`,
      );
    expect(await lowLockedWhileWaitingForHigh(pair, backfill)).toBe(true);
  });
});
