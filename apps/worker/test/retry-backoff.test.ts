import { TASK_QUEUE_NAME } from '@mcp-tasks/queue';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, isTerminal, sleep, type Harness, type WorkerProcess } from './harness.js';

let h: Harness;
let worker: WorkerProcess;
let jobs: Queue;

beforeAll(async () => {
  h = await createHarness('worker_retry_backoff');
  // One worker, so its sweeper is the only one; a 4 s backoff inside an 8 s wake-up grace: on a
  // starved machine the retry's delayed job can be promoted a second or more late, and a grace
  // only 1 s longer than the backoff then let the sweeper wake the task first (seen in CI).
  worker = await h.startWorker({
    MAX_ATTEMPTS: '2',
    RETRY_BASE_DELAY_MS: '4000',
    ENQUEUE_GRACE_MS: '8000',
  });
  jobs = new Queue(TASK_QUEUE_NAME, { connection: { url: h.redis.url }, prefix: h.redis.prefix });
}, 60_000);

afterAll(async () => {
  await jobs?.close();
  await h?.close();
});

describe('retry backoff', () => {
  it('is not cut short by the sweeper: the retry is marked enqueued and waits out its delay', async () => {
    const redispatched = () => worker.metric('mcp_worker_tasks_redispatched_total');
    // The task starts with an hour-old mark, so until its first attempt claims it the sweeper
    // may wake it as an orphan; that wake-up then runs the second attempt at once, and the run
    // says nothing about the backoff (seen in CI on a starved machine). Such a run is repeated
    // with a new task, at most three times; the assertions of a run that counts are unchanged.
    for (let run = 1; ; run++) {
      const redispatchedAtStart = await redispatched();
      const task = await startFailingTask();
      if ((await redispatched()) === redispatchedAtStart) {
        await expectBackoffHonoured(task.id, redispatchedAtStart);
        return;
      }
      if (run === 3) throw new Error('the sweeper woke the task before its first claim in 3 runs');
      await h.waitFor(task.id, isTerminal);
    }
  });
});

/** A task whose every attempt throws, woken once; returns after its first failure was marked. */
async function startFailingTask() {
  // A checkpoint this build cannot read makes every attempt throw a plain Error.
  const task = await h.insertTask('generate_report', { size: 'small' });
  // Its first wake-up was sent long ago (so only a fresh mark keeps the sweeper away).
  await h.query(
    `UPDATE tasks SET checkpoint = '{"phase":"from-the-future"}'::jsonb,
       enqueued_at = now() - interval '1 hour' WHERE id = $1`,
    [task.id],
  );
  await h.queue.wake(task.id, 'created');

  const failedOnce = await h.waitFor(task.id, (t) => t.failures >= 1);
  expect(failedOnce.status).toBe('working');
  expect(failedOnce.lease).toBeNull();
  // The failure is recorded first and the wake-again marks the row right after: poll for the mark.
  const isMarked = async () => {
    const rows = await h.query<{ fresh: boolean }>(
      `SELECT enqueued_at > now() - interval '1 minute' AS fresh FROM tasks WHERE id = $1`,
      [task.id],
    );
    return rows[0]?.fresh === true;
  };
  for (let i = 0; i < 50 && !(await isMarked()); i++) await sleep(100);
  expect(await isMarked()).toBe(true);
  return task;
}

/** Several sweeps during the backoff leave the task alone; the retry then runs and fails it. */
async function expectBackoffHonoured(taskId: string, redispatchedBeforeBackoff: number) {
  const redispatched = () => worker.metric('mcp_worker_tasks_redispatched_total');
  const leaderSweeps = () => worker.metric('mcp_worker_sweeps_total', { role: 'leader' });
  const before = await leaderSweeps();
  while ((await leaderSweeps()) < before + 3) await sleep(100);
  const during = await h.task(taskId);
  expect(during.status).toBe('working');
  expect(during.failures).toBe(1);
  expect(await redispatched()).toBe(redispatchedBeforeBackoff);
  expect(await jobs.getJobCounts('delayed', 'waiting', 'active')).toMatchObject({
    delayed: 1,
    waiting: 0,
    active: 0,
  });

  const done = await h.waitFor(taskId, isTerminal);
  expect(done.status).toBe('failed');
  expect(done.error).toEqual({ code: -32603, message: 'internal error after 2 attempts' });
  expect(done.failures).toBe(1);
  expect(await redispatched()).toBe(redispatchedBeforeBackoff);
}
