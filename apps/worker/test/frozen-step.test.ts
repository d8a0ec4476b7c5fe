import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, isTerminal, sleep, type Harness, type WorkerProcess } from './harness.js';

const LEASE_MS = 2_000;
let h: Harness;

beforeAll(async () => {
  h = await createHarness('worker_frozen_step');
}, 60_000);

afterEach(async () => {
  await h.stopWorkers();
});

afterAll(async () => {
  await h?.close();
});

interface StepLine {
  stepLog: 'start' | 'end';
  taskId: string;
  epoch: number;
  step: string;
  startMs: number;
  endMs?: number;
  outcome?: string;
  leaseDeadlineMs?: number;
  worker: string;
}

/** The STEP_LOG=on lines of one worker about one task, in the order written. */
function stepLines(worker: WorkerProcess, taskId: string): StepLine[] {
  return worker.process
    .output()
    .split('\n')
    .filter((line) => line.includes('"stepLog"'))
    .map((line) => ({ ...(JSON.parse(line) as StepLine), worker: worker.id }))
    .filter((line) => line.taskId === taskId);
}

/** Each execution from its start to its end, or to the lease deadline it held if that came first. */
function validIntervals(
  lines: readonly StepLine[],
): { worker: string; from: number; to: number }[] {
  return lines
    .filter((line) => line.stepLog === 'end')
    .map((line) => ({
      worker: line.worker,
      from: line.startMs,
      to: Math.min(line.endMs!, line.leaseDeadlineMs ?? Number.POSITIVE_INFINITY),
    }));
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('a worker frozen mid-step past its lease', () => {
  it('ends the stale step at its lease deadline when thawed, so no step runs twice within valid leases', async () => {
    // Frozen mid-sweep, a worker holds the sweeper lock until Postgres ends its silent session:
    // bounded here well inside the wait for the takeover.
    const env = { STEP_LOG: 'on', SWEEP_STEP_BUDGET_MS: '500', SWEEP_LEADER_TIMEOUT_MS: '3000' };
    const a = await h.startWorker(env);
    const b = await h.startWorker(env);
    const created = await h.createTask('slow_compute', { seconds: 10 });
    const held = await h.waitFor(created.id, (t) => t.lease !== null);
    const frozen = held.lease!.owner === a.id ? a : b;
    const other = frozen === a ? b : a;
    // Into the second one-second step, well before its sleep ends: after SIGCONT the step's own
    // timer is overdue before the lease keeper's, which is how a stale step used to run on.
    const startsOf = (w: WorkerProcess) =>
      stepLines(w, created.id).filter((l) => l.stepLog === 'start');
    const before = startsOf(frozen).length;
    await until(() => startsOf(frozen).length > before, 10_000, 'a fresh step on the first worker');
    await sleep(300);
    frozen.process.kill('SIGSTOP');
    try {
      await h.waitFor(
        created.id,
        (t) => t.lease?.owner === other.id || isTerminal(t),
        LEASE_MS * 2 + 5_000,
      );
      await until(() => startsOf(other).length > 0, 10_000, 'the step on the second worker');
    } finally {
      frozen.process.kill('SIGCONT');
    }
    const done = await h.waitFor(created.id, isTerminal, 40_000);
    expect(done.status).toBe('completed');
    await sleep(1_000);

    const frozenLines = stepLines(frozen, created.id);
    const otherLines = stepLines(other, created.id);
    const stale = frozenLines.filter((l) => l.stepLog === 'end').at(-1);
    // The thawed step was cut at the deadline of the lease it held: logged as such, not as a
    // step that went on to checkpoint.
    expect(stale).toMatchObject({ outcome: 'lease-expired' });
    expect(stale!.endMs!).toBeGreaterThan(stale!.leaseDeadlineMs!);
    // The other worker started only after that deadline (its claim needed the lease expired).
    const takeover = otherLines.find((l) => l.stepLog === 'start')!;
    expect(takeover.epoch).toBeGreaterThan(stale!.epoch);
    expect(takeover.startMs).toBeGreaterThan(stale!.leaseDeadlineMs!);
    // Every other end line finished within the lease it held.
    for (const line of [...frozenLines, ...otherLines].filter((l) => l.stepLog === 'end')) {
      if (line === stale) continue;
      expect(line.outcome).not.toBe('lease-expired');
      expect(line.endMs!).toBeLessThanOrEqual(line.leaseDeadlineMs!);
    }
    // No two executions overlap within valid leases.
    const intervals = validIntervals([...frozenLines, ...otherLines]).sort(
      (a, b) => a.from - b.from,
    );
    for (let i = 1; i < intervals.length; i += 1)
      expect(intervals[i]!.from).toBeGreaterThanOrEqual(intervals[i - 1]!.to);
    // Completed once, by the worker that took over; the thawed one lost its lease.
    expect(await other.metric('mcp_worker_jobs_total', { outcome: 'completed' })).toBe(1);
    expect(await frozen.metric('mcp_worker_jobs_total', { outcome: 'completed' })).toBe(0);
    expect(await frozen.metric('mcp_worker_leases_lost_total')).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
