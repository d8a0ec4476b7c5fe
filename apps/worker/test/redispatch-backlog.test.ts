import { createOrphanWaker } from '@mcp-tasks/store';
import { TASK_QUEUE_NAME } from '@mcp-tasks/queue';
import { newTaskId } from '@mcp-tasks/tasks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { createWorkerMetrics } from '../src/metrics.js';
import { createSweepWakeUpQueue } from '../src/sweeper/sweep-wake-up-queue.js';
import { createSweeper } from '../src/sweeper/sweeper.js';
import { createHarness, sleep, type Harness } from './harness.js';

let h: Harness;
const ORPHANS = 20_000;

beforeAll(async () => {
  h = await createHarness('worker_redispatch_backlog');
  // Redis lost its data: 20k working tasks, marked enqueued long ago, with no wake-up left.
  const ids = Array.from({ length: ORPHANS }, () => newTaskId());
  await h.query(
    `INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, created_at,
                        enqueued_at)
     SELECT id, 't', 'p', 'tools/call', 'slow_compute', '{"seconds": 1}',
            now() - interval '1 hour', now() - interval '1 hour'
     FROM unnest($1::text[]) AS id`,
    [ids],
  );
}, 120_000);

afterAll(async () => {
  await h?.close();
});

const count = async (sql: string): Promise<number> =>
  Number((await h.query<{ n: string }>(sql))[0]?.n);

describe('re-dispatch of a large orphan backlog', () => {
  it('wakes 20k orphans in a few sweeps, one wake-up each', async () => {
    const metrics = createWorkerMetrics();
    const sweeper = createSweeper({
      connectionString: h.database.connectionString,
      db: h.db,
      orphans: createOrphanWaker({
        db: h.db,
        wakeUpQueue: createSweepWakeUpQueue(h.queue),
        wakeUpGraceMs: 60_000,
      }),
      intervalMs: 1_000,
      retentionMs: 60_000,
      stepBudgetMs: 10_000,
      logger: createLogger({ level: 'silent', workerId: 'redispatch-backlog-test' }),
      metrics,
    });
    const leaderSweeps = async () =>
      (await metrics.sweeps.get()).values.find((v) => v.labels.role === 'leader')?.value ?? 0;
    const stale = () =>
      count(`SELECT count(*) AS n FROM tasks WHERE enqueued_at < now() - interval '1 minute'`);
    sweeper.start();
    let sweepsNeeded = 0;
    try {
      const deadline = Date.now() + 90_000;
      while (Date.now() < deadline) {
        const sweeps = await leaderSweeps();
        if (sweeps > 0 && (await stale()) === 0) {
          sweepsNeeded = sweeps;
          break;
        }
        if (sweeps >= 5) break;
        await sleep(100);
      }
    } finally {
      await sweeper.stop();
    }
    expect(await stale()).toBe(0);
    expect(sweepsNeeded).toBeGreaterThan(0);
    expect(sweepsNeeded).toBeLessThanOrEqual(4);
    expect((await metrics.redispatched.get()).values[0]?.value).toBe(ORPHANS);
    // Exactly one wake-up per task: nothing was sent twice across batches or sweeps.
    expect(await h.admin.llen(`${h.redis.prefix}:${TASK_QUEUE_NAME}:wait`)).toBe(ORPHANS);
  }, 150_000);
});
