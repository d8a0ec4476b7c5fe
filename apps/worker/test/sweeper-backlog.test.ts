import { createDb, createOrphanWaker, type Db } from '@mcp-tasks/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { createWorkerMetrics, type WorkerMetrics } from '../src/metrics.js';
import { createSweepWakeUpQueue } from '../src/sweeper/sweep-wake-up-queue.js';
import { MAX_ORPHAN_WAKE_DEFERRAL_INTERVALS, createSweeper } from '../src/sweeper/sweeper.js';
import { createHarness, sleep, type Harness } from './harness.js';

let h: Harness;
/** The sweeper's pool, with a statement timeout far below what one unbounded statement needs. */
let tightDb: Db;

const BACKLOG = 50_000;
const STATEMENT_TIMEOUT_MS = 300;

beforeAll(async () => {
  h = await createHarness('worker_sweeper_backlog');
  tightDb = createDb({
    connectionString: h.database.connectionString,
    max: 4,
    statementTimeoutMs: STATEMENT_TIMEOUT_MS,
  });
  // Waiting tasks whose ttl ran out a minute ago (workers down, a burst with one ttl) ...
  await h.query(
    `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status,
                        input_requests, ttl_ms, created_at)
     SELECT 'expire-' || g, 't', 'p', 'tools/call', 'slow_compute', '{}', 'input_required',
            '{"k": {}}', 60000, now() - interval '2 minutes'
     FROM generate_series(1, $1) AS g`,
    [BACKLOG],
  );
  // ... and finished tasks two days past expiry, beyond any retention.
  await h.query(
    `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, error,
                        ttl_ms, created_at)
     SELECT 'delete-' || g, 't', 'p', 'tools/call', 'slow_compute', '{}', 'failed',
            '{"code": -32603, "message": "x"}', 60000, now() - interval '2 days'
     FROM generate_series(1, $1) AS g`,
    [BACKLOG],
  );
}, 180_000);

afterAll(async () => {
  await tightDb?.destroy();
  await h?.close();
});

const count = async (sql: string): Promise<number> =>
  Number((await h.query<{ n: string }>(sql))[0]?.n);

/** A sweeper on this file's database, its wake-ups into the harness's queue, retention an hour. */
function backlogSweeper(options: {
  name: string;
  db: Db;
  wakeUpGraceMs: number;
  intervalMs: number;
  batchSize: number;
  stepBudgetMs: number;
  metrics: WorkerMetrics;
}) {
  const { db, wakeUpGraceMs, name, ...rest } = options;
  return createSweeper({
    ...rest,
    connectionString: h.database.connectionString,
    db,
    orphans: createOrphanWaker({ db, wakeUpQueue: createSweepWakeUpQueue(h.queue), wakeUpGraceMs }),
    retentionMs: 60 * 60_000,
    logger: createLogger({ level: 'silent', workerId: name }),
  });
}

describe('the sweeper on a backlog', () => {
  it('expires and deletes 50k rows in bounded batches under a tiny statement timeout, over several sweeps', async () => {
    // An unbounded statement over the backlog cannot finish within the timeout.
    await expect(
      tightDb
        .updateTable('tasks')
        .set({ status_message: 'probe' })
        .where('id', 'like', 'expire-%')
        .execute(),
    ).rejects.toMatchObject({ code: '57014' });

    const metrics = createWorkerMetrics();
    const sweeper = backlogSweeper({
      name: 'sweeper-backlog-test',
      db: tightDb,
      wakeUpGraceMs: 60_000,
      intervalMs: 50,
      batchSize: 1_000,
      stepBudgetMs: 500,
      metrics,
    });
    const dueToExpire = () =>
      count(`SELECT count(*) AS n FROM tasks
              WHERE status IN ('working', 'input_required') AND expires_at <= now()`);
    const dueToDelete = () => count(`SELECT count(*) AS n FROM tasks WHERE id LIKE 'delete-%'`);
    sweeper.start();
    try {
      const deadline = Date.now() + 90_000;
      while ((await dueToExpire()) + (await dueToDelete()) > 0 && Date.now() < deadline) {
        await sleep(250);
      }
    } finally {
      await sweeper.stop();
    }
    expect(await dueToExpire()).toBe(0);
    expect(await dueToDelete()).toBe(0);
    expect(
      await count(`SELECT count(*) AS n FROM tasks
                    WHERE id LIKE 'expire-%' AND status = 'failed'
                      AND error = '{"code": -32603, "message": "task expired"}'::jsonb`),
    ).toBe(BACKLOG);
    // Bounded per sweep: it took several sweeps, and none of them failed as a whole.
    const sweeps = (await metrics.sweeps.get()).values;
    const leaderSweeps = sweeps.find((v) => v.labels.role === 'leader')?.value ?? 0;
    expect(leaderSweeps).toBeGreaterThan(1);
    expect(sweeps.find((v) => v.labels.role === 'error')?.value ?? 0).toBe(0);
    // Operators (and the soak) read the sweeper's pace off these counters.
    const swept = (await metrics.sweptTasks.get()).values;
    expect(swept.find((v) => v.labels.step === 'expire')?.value).toBe(BACKLOG);
    expect(swept.find((v) => v.labels.step === 'delete')?.value).toBe(BACKLOG);
  }, 150_000);

  it('counts the rows of the batches a step committed before one of its batches failed', async () => {
    await h.query('TRUNCATE tasks');
    // 3,000 finished tasks past retention, deleted oldest first (expires_at follows g) ...
    await h.query(
      `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, error,
                          ttl_ms, created_at)
       SELECT 'gone-' || g, 't', 'p', 'tools/call', 'slow_compute', '{}', 'failed',
              '{"code": -32603, "message": "x"}', 60000,
              now() - interval '2 days' + g * interval '1 millisecond'
       FROM generate_series(1, 3000) AS g`,
    );
    // ... and one row the database refuses to delete: the third batch of 1,000 fails every time.
    await h.query(`CREATE FUNCTION refuse_poisoned_delete() RETURNS trigger LANGUAGE plpgsql AS $$
                   BEGIN
                     IF OLD.id = 'gone-2500' THEN RAISE EXCEPTION 'poisoned row'; END IF;
                     RETURN OLD;
                   END $$`);
    await h.query(`CREATE TRIGGER refuse_poisoned_delete BEFORE DELETE ON tasks
                   FOR EACH ROW EXECUTE FUNCTION refuse_poisoned_delete()`);
    const metrics = createWorkerMetrics();
    const sweeper = backlogSweeper({
      name: 'sweeper-partial-step-test',
      db: h.db,
      wakeUpGraceMs: 60_000,
      intervalMs: 50,
      batchSize: 1_000,
      stepBudgetMs: 60_000,
      metrics,
    });
    const deleteErrors = async () =>
      (await metrics.sweepStepErrors.get()).values.find((v) => v.labels.step === 'delete')?.value ??
      0;
    sweeper.start();
    try {
      const deadline = Date.now() + 20_000;
      while ((await deleteErrors()) < 2 && Date.now() < deadline) await sleep(50);
    } finally {
      await sweeper.stop();
      await h.query('DROP TRIGGER refuse_poisoned_delete ON tasks');
      await h.query('DROP FUNCTION refuse_poisoned_delete()');
    }
    // The first sweep deleted two batches, then failed on the third; later sweeps fail at once.
    expect(await deleteErrors()).toBeGreaterThanOrEqual(2);
    expect(await count(`SELECT count(*) AS n FROM tasks WHERE id LIKE 'gone-%'`)).toBe(1_000);
    const swept = (await metrics.sweptTasks.get()).values;
    expect(swept.find((v) => v.labels.step === 'delete')?.value).toBe(2_000);
  }, 60_000);

  it('sweeps back to back while expiries are left over, without waking the expired backlog', async () => {
    // Ten batches of expired tasks nobody holds: each one an orphan too, long past the grace.
    // Alone in the table, whatever ran before.
    await h.query('TRUNCATE tasks');
    const rows = 2_000;
    const batchSize = 200;
    await h.query(
      `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, ttl_ms, created_at)
       SELECT 'pace-' || g, 't', 'p', 'tools/call', 'slow_compute', '{}', 60000,
              now() - interval '2 minutes' + g * interval '1 millisecond'
       FROM generate_series(1, $1) AS g`,
      [rows],
    );
    const intervalMs = 4_000;
    const metrics = createWorkerMetrics();
    const sweeper = backlogSweeper({
      name: 'sweeper-pace-test',
      db: h.db,
      wakeUpGraceMs: 1_000,
      intervalMs,
      batchSize,
      // One batch per step and sweep: the backlog takes ten sweeps.
      stepBudgetMs: 0,
      metrics,
    });
    const dueToExpire = () =>
      count(`SELECT count(*) AS n FROM tasks WHERE id LIKE 'pace-%' AND status = 'working'`);
    sweeper.start();
    try {
      // Five intervals: at one sweep per interval only half the backlog would be gone by then.
      const deadline = Date.now() + 5 * intervalMs;
      while ((await dueToExpire()) > 0 && Date.now() < deadline) await sleep(100);
    } finally {
      await sweeper.stop();
    }
    expect(await dueToExpire()).toBe(0);
    expect(
      await count(
        `SELECT count(*) AS n FROM tasks WHERE id LIKE 'pace-%' AND enqueued_at IS NOT NULL`,
      ),
    ).toBe(0);
    expect(
      await h.queue.pendingJobs(Array.from({ length: rows }, (_, i) => `pace-${i + 1}`)),
    ).toEqual(new Set());
  }, 60_000);

  it('still wakes a lost task when an expiry backlog never clears', async () => {
    await h.query('TRUNCATE tasks');
    // Far more expired tasks than the test lets the sweeper work off ...
    await h.query(
      `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, ttl_ms, created_at)
       SELECT 'endless-' || g, 't', 'p', 'tools/call', 'slow_compute', '{}', 60000,
              now() - interval '2 minutes'
       FROM generate_series(1, 20000) AS g`,
    );
    // ... and one task with no TTL whose wake-up was lost before them (orphans go oldest first).
    await h.query(
      `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, created_at)
       VALUES ('lost-wake-up', 't', 'p', 'tools/call', 'slow_compute', '{}', now() - interval '10 minutes')`,
    );
    const intervalMs = 200;
    const sweeper = backlogSweeper({
      name: 'sweeper-deferral-test',
      db: h.db,
      wakeUpGraceMs: 1_000,
      intervalMs,
      batchSize: 10,
      stepBudgetMs: 0,
      metrics: createWorkerMetrics(),
    });
    const woken = async () => (await h.queue.pendingJobs(['lost-wake-up'])).has('lost-wake-up');
    sweeper.start();
    try {
      const deadline = Date.now() + 4 * MAX_ORPHAN_WAKE_DEFERRAL_INTERVALS * intervalMs;
      while (!(await woken()) && Date.now() < deadline) await sleep(100);
    } finally {
      await sweeper.stop();
    }
    expect(await woken()).toBe(true);
    // The backlog was still there: the wake-up came from the bound, not from a cleared backlog.
    expect(
      await count(
        `SELECT count(*) AS n FROM tasks WHERE id LIKE 'endless-%' AND status = 'working'`,
      ),
    ).toBeGreaterThan(0);
  }, 60_000);
});
