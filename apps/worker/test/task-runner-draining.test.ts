import { TOOL_PACKS, createToolCatalogue } from '@mcp-tasks/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHeldTasks } from '../src/held-tasks.js';
import { createLogger } from '../src/logger.js';
import { createWorkerMetrics } from '../src/metrics.js';
import { createRequeue } from '../src/requeue.js';
import { createTaskRunner } from '../src/task-runner.js';
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
    const runner = createTaskRunner({
      db: h.db,
      catalogue: createToolCatalogue({ packs: TOOL_PACKS }),
      workerId: 'draining-test',
      leaseMs: 2_000,
      retry: { maxAttempts: 3, baseDelayMs: 250, maxDelayMs: 1_000 },
      settings: { reportStepMs: 10 },
      heldTasks: createHeldTasks(),
      isDraining: () => true,
      requeue: createRequeue({ db: h.db, queue: h.queue }),
      logger: createLogger({ level: 'silent', workerId: 'draining-test' }),
      metrics: createWorkerMetrics(),
    });

    expect(await runner.run(task.id)).toBe('released');
    const after = await h.task(task.id);
    expect(after).toMatchObject({ status: 'working', lease: null, leaseEpoch: 0, attempts: 0 });
    expect(await h.queue.hasPendingJob(task.id)).toBe(true);
  });
});
