import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('worker_runner_draining');
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('a draining worker', () => {
  it('passes a wake-up on without claiming the task (no epoch bump, no attempt spent)', async () => {
    const task = await h.insertTask('slow_compute', { seconds: 1 });
    const worker = await h.buildWorker({
      WORKER_ID: 'draining-test',
      LEASE_MS: '2000',
      RETRY_MAX_DELAY_MS: '1000',
      REPORT_STEP_MS: '10',
      LOG_LEVEL: 'silent',
    });
    worker.drain();

    expect(await worker.runner.run(task.id)).toBe('released');
    const after = await h.task(task.id);
    expect(after).toMatchObject({ status: 'working', lease: null, leaseEpoch: 0, attempts: 0 });
    expect(await h.queue.hasPendingJob(task.id)).toBe(true);
  });
});
