import { performance } from 'node:perf_hooks';
import { claimLease } from '@mcp-tasks/store';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLeaseKeeper } from '../src/attempt/lease-keeper.js';
import { createLogger } from '../src/logger.js';
import { createHarness, sleep, type Harness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('worker_lease_keeper');
}, 60_000);

afterAll(async () => {
  await h?.close();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the lease keeper', () => {
  it('reports the lease unconfirmed after a lease period even while a renewal hangs', async () => {
    const task = await h.insertTask('slow_compute', { seconds: 1 });
    // Long enough that the stop margin (a fifth: 600 ms) outlasts a starved CI machine's timer lag.
    const leaseMs = 3_000;
    const claim = await claimLease(h.db, task.id, 'keeper-test', leaseMs);
    expect(claim).not.toBeNull();

    // Another session holds the row lock, so every renewal blocks (as on a hung connection).
    const locker = new pg.Client({ connectionString: h.database.connectionString });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [task.id]);

    let lost = 0;
    let superseded = 0;
    let stoppedAtMs: number | undefined;
    const keeper = startLeaseKeeper({
      db: h.db,
      fence: claim!.fence,
      leaseMs,
      logger: createLogger({ level: 'silent', workerId: 'keeper-test' }),
      onCancelRequested: () => undefined,
      onLeaseLost: () => (superseded += 1),
      onLeaseUnconfirmed: () => {
        lost += 1;
        // The wall clock at the moment the step is stopped, taken here and not by a query sent
        // now, whose own delay on a busy machine would be counted against the keeper.
        stoppedAtMs = Date.now();
      },
    });
    try {
      // Well below the pool's 10 s statement timeout, which would otherwise end the wait.
      const deadline = Date.now() + 5_000;
      while (lost === 0 && Date.now() < deadline) await sleep(50);
      const blocked = await h.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      expect(Number(blocked[0]?.n)).toBeGreaterThanOrEqual(1);
      expect(lost).toBe(1);
    } finally {
      keeper.stop();
      await locker.query('ROLLBACK');
      await locker.end();
    }
    await sleep(300);
    expect(lost).toBe(1);
    expect(superseded).toBe(0);
    // Stopped before the lease ran out (a safety margin), not at or after expiry, when another
    // worker may already claim and run the next step. Postgres runs on this machine: one clock.
    const [row] = await h.query<{ expires_ms: number }>(
      `SELECT extract(epoch FROM lease_expires_at) * 1000 AS expires_ms FROM tasks WHERE id = $1`,
      [task.id],
    );
    expect(stoppedAtMs).toBeDefined();
    expect(Number(row?.expires_ms) - stoppedAtMs!).toBeGreaterThan(0);
  });

  it('measures on the monotonic clock: a wall clock jumping an hour ahead does not stop the step', async () => {
    const task = await h.insertTask('slow_compute', { seconds: 1 });
    const leaseMs = 1_500;
    const claim = await claimLease(h.db, task.id, 'keeper-clock-test', leaseMs);
    expect(claim).not.toBeNull();
    let stopped = 0;
    const keeper = startLeaseKeeper({
      db: h.db,
      fence: claim!.fence,
      leaseMs,
      logger: createLogger({ level: 'silent', workerId: 'keeper-clock-test' }),
      onCancelRequested: () => undefined,
      onLeaseLost: () => (stopped += 1),
      onLeaseUnconfirmed: () => (stopped += 1),
    });
    try {
      // Only Date is faked (NTP step, VM resume): timers, performance.now() and Postgres keep real time.
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() + 60 * 60_000);
      await sleep(2 * leaseMs);
      expect(stopped).toBe(0);
      const row = await h.query<{ held: boolean }>(
        `SELECT lease_expires_at > now() AS held FROM tasks WHERE id = $1`,
        [task.id],
      );
      expect(row[0]?.held).toBe(true);
    } finally {
      keeper.stop();
    }
  });

  it('reports the lease gone at once after a stall past its deadline, before its own timer runs', async () => {
    const task = await h.insertTask('slow_compute', { seconds: 1 });
    const leaseMs = 600;
    const claimSentAt = performance.now();
    const claim = await claimLease(h.db, task.id, 'keeper-stall-test', leaseMs);
    expect(claim).not.toBeNull();
    let unconfirmed = 0;
    const keeper = startLeaseKeeper({
      db: h.db,
      fence: claim!.fence,
      leaseMs,
      logger: createLogger({ level: 'silent', workerId: 'keeper-stall-test' }),
      heldSince: claimSentAt,
      onCancelRequested: () => undefined,
      onLeaseLost: () => undefined,
      onLeaseUnconfirmed: () => (unconfirmed += 1),
    });
    try {
      // Counted from the claim's send, less the stop margin (a fifth of the lease, at least 100 ms).
      expect(keeper.deadline()).toBeCloseTo(claimSentAt + leaseMs - 120, 6); // float sums differ by an ulp
      expect(keeper.stillHeld()).toBe(true);
      // The event loop stalls (as under SIGSTOP): no timer, no renewal can run meanwhile.
      const stalledUntil = keeper.deadline() + 50;
      while (performance.now() < stalledUntil) {
        /* stalled */
      }
      expect(keeper.stillHeld()).toBe(false);
      expect(unconfirmed).toBe(1);
      await sleep(leaseMs);
      // Once: the keeper's own deadline timer, overdue now, does not report it again.
      expect(unconfirmed).toBe(1);
      expect(keeper.stillHeld()).toBe(false);
    } finally {
      keeper.stop();
    }
  });
});
