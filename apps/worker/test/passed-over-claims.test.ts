import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, isTerminal, sleep, type Harness } from './harness.js';

/**
 * The fair claim takes a waiting task with SKIP LOCKED, so a row another writer holds for a
 * moment — the gateway flagging it for a `subscriptions/listen`, a cancel request, the sweeper's
 * wake-up mark — is passed over. Seen in the bench's realistic mix: a task whose listener's flag
 * was being written as its one wake-up claimed found nothing, and the task stayed `working`,
 * unclaimed, until the sweeper's wake-up grace (a minute by default). The wake-up must not be
 * spent on nothing while its task still waits.
 */
let h: Harness;

beforeAll(async () => {
  h = await createHarness('worker_passed_over');
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('a wake-up whose task is locked by another writer as it claims', () => {
  it('is sent again, and the task runs once the lock is gone (not after the sweeper grace)', async () => {
    // No sweeps: only the wake-up path can run the task within this test.
    const worker = await h.startWorker({ SWEEP_INTERVAL_MS: '600000', ENQUEUE_GRACE_MS: '600000' });
    const task = await h.insertTask('slow_compute', { seconds: 1 });
    // Another writer holds the row (as the listen flag's UPDATE does), uncommitted.
    const holder = new pg.Client({ connectionString: h.database.connectionString });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE', [task.id]);
      await h.queue.wake(task.id, 'created');
      // The worker takes the wake-up and claims nothing: the row is locked.
      const deadline = Date.now() + 10_000;
      while ((await worker.metric('mcp_worker_jobs_total')) < 1) {
        if (Date.now() > deadline) throw new Error('the worker never took the wake-up');
        await sleep(50);
      }
      await sleep(300);
    } finally {
      await holder.query('COMMIT');
      await holder.end();
    }
    const ended = await h.waitFor(task.id, isTerminal, 10_000);
    expect(ended.status).toBe('completed');
  }, 60_000);
});
