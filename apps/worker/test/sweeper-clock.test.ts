import { createTask, createOrphanWaker, markWakeUpSent } from '@mcp-tasks/store';
import { newTaskId } from '@mcp-tasks/tasks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../src/logger.js';
import { createWorkerMetrics } from '../src/metrics.js';
import { createSweepWakeUpQueue } from '../src/sweeper/sweep-wake-up-queue.js';
import { createSweeper } from '../src/sweeper/sweeper.js';
import { OWNER, createHarness, sleep, type Harness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('worker_sweeper_clock');
}, 60_000);

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  await h?.close();
});

const newSlowTask = async (ttlMs: number | null) =>
  (
    await createTask(h.db, {
      id: newTaskId(),
      owner: OWNER,
      operation: { method: 'tools/call', toolName: 'slow_compute', arguments: { seconds: 1 } },
      ttlMs,
      pollIntervalMs: null,
      statusMessage: null,
    })
  ).task;

describe('the sweeper clock', () => {
  it('judges expiry and orphans by the database clock, not a host clock running an hour ahead', async () => {
    const fresh = await newSlowTask(10 * 60_000);
    const unenqueued = await newSlowTask(null);
    const due = await newSlowTask(1);
    await markWakeUpSent(h.db, [fresh.id]);
    await sleep(20);

    // Only Date is faked: timers, sockets and Postgres keep real time.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 60 * 60_000);

    const metrics = createWorkerMetrics();
    const sweeper = createSweeper({
      connectionString: h.database.connectionString,
      db: h.db,
      orphans: createOrphanWaker({
        db: h.db,
        wakeUpQueue: createSweepWakeUpQueue(h.queue),
        wakeUpGraceMs: 60_000,
      }),
      intervalMs: 50,
      retentionMs: 60_000,
      logger: createLogger({ level: 'silent', workerId: 'sweeper-clock-test' }),
      metrics,
    });
    sweeper.start();
    try {
      for (let i = 0; i < 200; i += 1) {
        if ((await h.task(due.id)).status === 'failed') break;
        await sleep(50);
      }
      // Let at least one more complete sweep run after the one that expired `due`.
      const sweeps = async () =>
        (await metrics.sweeps.get()).values.reduce((n, v) => n + v.value, 0);
      const seen = await sweeps();
      while ((await sweeps()) < seen + 2) await sleep(20);
    } finally {
      await sweeper.stop();
    }

    expect((await h.task(due.id)).error).toEqual({ code: -32603, message: 'task expired' });
    expect((await h.task(fresh.id)).status).toBe('working');
    expect((await h.task(unenqueued.id)).status).toBe('working');
    expect((await metrics.redispatched.get()).values[0]?.value ?? 0).toBe(0);
    expect(await h.queue.hasPendingJob(unenqueued.id)).toBe(false);
  });
});
