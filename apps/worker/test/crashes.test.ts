import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OWNER, accept, createHarness, isTerminal, sleep, type Harness } from './harness.js';

const LEASE_MS = 2_000;
let h: Harness;

beforeAll(async () => {
  h = await createHarness('worker_crash');
}, 60_000);

afterEach(async () => {
  await h.stopWorkers();
});

afterAll(async () => {
  await h?.close();
});

const renderedCount = (checkpoint: unknown): number => {
  const rendered = (checkpoint as { rendered?: unknown[] } | null)?.rendered;
  return Array.isArray(rendered) ? rendered.length : 0;
};

describe('worker failures', () => {
  it('finishes a report on another worker from its checkpoint after kill -9', async () => {
    const a = await h.startWorker({ REPORT_STEP_MS: '300' });
    const b = await h.startWorker({ REPORT_STEP_MS: '300' });
    const created = await h.createTask('generate_report', { size: 'large' });
    await h.waitFor(created.id, (t) => t.status === 'input_required');
    await h.service.submitInputResponses(OWNER, created.id, {
      approve_outline: accept({ approved: true }),
      choose_format: accept({ format: 'markdown' }),
    });
    const mid = await h.waitFor(
      created.id,
      (t) => renderedCount(t.checkpoint) >= 2 || isTerminal(t),
    );
    expect(mid.status).toBe('working');
    const victim = [a, b].find((w) => w.id === mid.lease?.owner);
    const survivor = [a, b].find((w) => w !== victim)!;
    expect(victim).toBeDefined();
    const renderedAtKill = renderedCount(mid.checkpoint);
    const survivorStepsBefore = await survivor.metric('mcp_worker_steps_total', {
      tool: 'generate_report',
    });
    victim!.process.kill('SIGKILL');

    // Progress never goes backwards while the survivor takes over.
    let last = renderedAtKill;
    const done = await h.waitFor(
      created.id,
      (t) => {
        const now = renderedCount(t.checkpoint);
        if (t.status === 'working') {
          expect(now).toBeGreaterThanOrEqual(last);
          last = now;
        }
        return isTerminal(t);
      },
      // Lease expiry plus a sweep, then at most four 300 ms sections.
      2 * LEASE_MS + 4 * 300 + 2_000,
    );
    expect(done.status).toBe('completed');
    expect(done.lease).toBeNull();
    expect(done.result).toMatchObject({ structuredContent: { sections: 6, format: 'markdown' } });
    // The survivor rendered only what was left (at most the one section in flight at the kill).
    const survivorSteps =
      (await survivor.metric('mcp_worker_steps_total', { tool: 'generate_report' })) -
      survivorStepsBefore;
    expect(survivorSteps).toBeGreaterThanOrEqual(1);
    expect(survivorSteps).toBeLessThanOrEqual(6 - renderedAtKill);
    expect(done.leaseEpoch).toBeGreaterThan(mid.leaseEpoch);
  });

  it('rejects the late writes of a worker frozen past its lease, and completes exactly once', async () => {
    // The frozen worker never sweeps (so it cannot hold the sweeper lock while stopped).
    const frozen = await h.startWorker({ SWEEP_INTERVAL_MS: '600000' });
    const created = await h.createTask('slow_compute', { seconds: 8 });
    await h.waitFor(created.id, (t) => t.lease?.owner === frozen.id && t.checkpoint !== null);
    const other = await h.startWorker();
    frozen.process.kill('SIGSTOP');
    let frozenEpoch = 0;
    try {
      const before = await h.task(created.id);
      frozenEpoch = before.leaseEpoch;
      const taken = await h.waitFor(
        created.id,
        (t) => (t.lease?.owner === other.id && t.leaseEpoch > frozenEpoch) || isTerminal(t),
        LEASE_MS * 2 + 3_000,
      );
      expect(taken.status).toBe('working');
      // Resumed from the frozen worker's checkpoint, not from zero.
      expect((taken.checkpoint as { elapsedMs: number }).elapsedMs).toBeGreaterThanOrEqual(1_000);
    } finally {
      frozen.process.kill('SIGCONT');
    }
    const done = await h.waitFor(created.id, isTerminal, 15_000);
    expect(done.status).toBe('completed');
    await sleep(1_500);
    // The thawed worker found its fence gone: it lost the lease and completed nothing.
    expect(await frozen.metric('mcp_worker_leases_lost_total')).toBeGreaterThanOrEqual(1);
    expect(await frozen.metric('mcp_worker_jobs_total', { outcome: 'completed' })).toBe(0);
    expect(await other.metric('mcp_worker_jobs_total', { outcome: 'completed' })).toBe(1);
    const after = await h.task(created.id);
    expect(after).toMatchObject({
      status: 'completed',
      result: done.result,
      leaseEpoch: done.leaseEpoch,
    });
  });

  it('brings every task to a terminal state after the queue keys vanish from Redis', async () => {
    await h.startWorker({ WORKER_CONCURRENCY: '2' });
    await h.startWorker({ WORKER_CONCURRENCY: '2' });
    const slow = await Promise.all(
      Array.from({ length: 6 }, () => h.createTask('slow_compute', { seconds: 1.5 })),
    );
    const report = await h.createTask('generate_report', { size: 'small' });
    const failing = await h.createTask('failing_job', {});
    await h.waitFor(report.id, (t) => t.status === 'input_required');
    await sleep(300);
    // Only this file's prefix: a FLUSHALL would hit every test file sharing this Redis.
    const deleteQueueKeys = async () => {
      const keys = await h.admin.keys(`${h.redis.prefix}*`);
      if (keys.length > 0) await h.admin.del(...keys);
      return keys.length;
    };
    expect(await deleteQueueKeys()).toBeGreaterThan(0);
    await h.service.submitInputResponses(OWNER, report.id, {
      approve_outline: accept({ approved: true }),
    });
    await sleep(100);
    await deleteQueueKeys();

    const all = [...slow, report, failing];
    const finals = await Promise.all(all.map((t) => h.waitFor(t.id, isTerminal, 30_000)));
    expect(finals.map((t) => t.status)).toEqual(all.map(() => 'completed'));
    expect(finals.at(-1)?.result).toMatchObject({ isError: true });
  });

  it('gives tasks back on SIGTERM and exits 0; another worker finishes them', async () => {
    const leaving = await h.startWorker({ SHUTDOWN_GRACE_MS: '3000' });
    // SIGTERM as soon as the leaving worker holds it, before the other worker boots: no boot
    // time in between on a loaded machine, so the task need only outlast one slice and the grace.
    const created = await h.createTask('slow_compute', { seconds: 6 });
    await h.waitFor(created.id, (t) => t.lease?.owner === leaving.id && t.checkpoint !== null);
    const code = await leaving.process.stop(10_000);
    expect(code).toBe(0);
    // Given back, not finished: working, no lease, and nobody else could have taken it yet.
    const released = await h.task(created.id);
    expect(released.status).toBe('working');
    expect(released.lease).toBeNull();
    const staying = await h.startWorker();
    const done = await h.waitFor(created.id, isTerminal, 60_000);
    expect(done.status).toBe('completed');
    expect(done.attempts).toBe(2);
    expect(await staying.metric('mcp_worker_jobs_total', { outcome: 'completed' })).toBe(1);
  }, 120_000);
});
