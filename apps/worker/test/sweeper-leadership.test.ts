import { LEADERSHIP_APPLICATION_NAME, createOrphanWaker } from '@mcp-tasks/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { createWorkerMetrics } from '../src/metrics.js';
import { createSweepWakeUpQueue } from '../src/sweeper/sweep-wake-up-queue.js';
import { createSweeper } from '../src/sweeper/sweeper.js';
import { createHarness, sleep, type Harness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('worker_sweeper_leadership');
}, 60_000);

afterAll(async () => {
  await h?.close();
});

/** A sweeper on the harness's database; `overrides` set its timing. */
function sweeperWith(
  workerId: string,
  overrides: Partial<Parameters<typeof createSweeper>[0]>,
  metrics = createWorkerMetrics(),
) {
  return createSweeper({
    connectionString: h.database.connectionString,
    db: h.db,
    orphans: createOrphanWaker({ db: h.db, wakeUpQueue: createSweepWakeUpQueue(h.queue) }),
    intervalMs: 50,
    retentionMs: 60_000,
    logger: createLogger({ level: 'silent', workerId }),
    metrics,
    ...overrides,
  });
}

/** The backends of leadership connections on this file's database. */
const leaderBackends = async (): Promise<number[]> =>
  (
    await h.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
        WHERE application_name = $1 AND datname = current_database()`,
      [LEADERSHIP_APPLICATION_NAME],
    )
  ).map((row) => row.pid);

describe('the sweeper leadership connection', () => {
  it('is one connection per process across sweeps, replaced after it is lost', async () => {
    const metrics = createWorkerMetrics();
    const sweeper = sweeperWith('sweeper-leadership-test', {}, metrics);
    const leaderSweeps = async () =>
      (await metrics.sweeps.get()).values.find((v) => v.labels.role === 'leader')?.value ?? 0;
    const seen = new Set<number>();
    sweeper.start();
    try {
      const start = await leaderSweeps();
      while ((await leaderSweeps()) < start + 10) {
        for (const pid of await leaderBackends()) seen.add(pid);
        await sleep(20);
      }
      expect(seen.size).toBe(1);

      // Losing it (a failover, a killed backend) is noticed; the next sweep opens a new one.
      const [first] = [...seen];
      await h.query('SELECT pg_terminate_backend($1)', [first]);
      const after = await leaderSweeps();
      while ((await leaderSweeps()) < after + 3) await sleep(20);
      const now = await leaderBackends();
      expect(now).toHaveLength(1);
      expect(now[0]).not.toBe(first);
    } finally {
      await sweeper.stop();
    }
    // stop() closes it.
    expect(await leaderBackends()).toEqual([]);
  });

  it('is ended by Postgres once silent for the leader timeout (SWEEP_LEADER_TIMEOUT_MS)', async () => {
    // Sweeps a second apart and a bound of 300 ms: between two sweeps the connection sits idle
    // past the bound, as a leader frozen or cut off mid-sweep would, and Postgres ends it.
    const sweeper = sweeperWith('sweeper-leader-timeout-test', {
      intervalMs: 1_000,
      stepBudgetMs: 50,
      leaderTimeoutMs: 300,
    });
    sweeper.start();
    try {
      let opened: number | undefined;
      while (opened === undefined) {
        opened = (await leaderBackends())[0];
        await sleep(10);
      }
      await expect
        .poll(async () => (await leaderBackends()).includes(opened), {
          timeout: 3_000,
          interval: 25,
        })
        .toBe(false);
    } finally {
      await sweeper.stop();
    }
  });
});

describe('the last-sweep row (sweeper_state, read by the console health page)', () => {
  it('is written by the leader after each sweep: which worker, when, and its settings', async () => {
    const sweeper = sweeperWith('sweeper-state-test', {
      workerId: 'sweeper-state-test',
      retentionMs: 86_400_000,
      intervalMs: 40,
    });
    sweeper.start();
    try {
      let rows: { worker_id: string; retention_ms: string; interval_ms: number }[] = [];
      while (rows.length === 0) {
        rows = await h.query(
          "SELECT worker_id, retention_ms, interval_ms FROM sweeper_state WHERE swept_at > now() - interval '5 seconds'",
        );
        await sleep(20);
      }
      expect(rows).toEqual([
        { worker_id: 'sweeper-state-test', retention_ms: '86400000', interval_ms: 40 },
      ]);
      const sweptAt = async (): Promise<number> =>
        (
          await h.query<{ at: Date }>('SELECT swept_at AS at FROM sweeper_state')
        )[0]?.at.getTime() ?? 0;
      const first = await sweptAt();
      let later = first;
      while (later === first) {
        await sleep(20);
        later = await sweptAt();
      }
      expect(later).toBeGreaterThan(first);
      expect(await h.query('SELECT count(*)::int AS n FROM sweeper_state')).toEqual([{ n: 1 }]);
    } finally {
      await sweeper.stop();
    }
  });
});
