import { claimLease } from '@mcp-tasks/store';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLeaseKeeper } from '../src/lease-keeper.js';
import { createLogger } from '../src/logger.js';
import { createHarness, sleep, type Harness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('worker_lease_keeper');
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('the lease keeper', () => {
  it('reports the lease unconfirmed after a lease period even while a renewal hangs', async () => {
    const task = await h.insertTask('slow_compute', { seconds: 1 });
    const leaseMs = 600;
    const claim = await claimLease(h.db, task.id, 'keeper-test', leaseMs);
    expect(claim).not.toBeNull();

    // Another session holds the row lock, so every renewal blocks (as on a hung connection).
    const locker = new pg.Client({ connectionString: h.database.connectionString });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [task.id]);

    let lost = 0;
    let superseded = 0;
    const keeper = startLeaseKeeper({
      db: h.db,
      fence: claim!.fence,
      leaseMs,
      logger: createLogger({ level: 'silent', workerId: 'keeper-test' }),
      onCancelRequested: () => undefined,
      onLeaseLost: () => (superseded += 1),
      onLeaseUnconfirmed: () => (lost += 1),
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
  });
});
