import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, isTerminal, sleep, type Harness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('worker_infra_errors');
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('infrastructure errors', () => {
  it("do not spend the task's retry budget: a write whose connection is killed is retried later", async () => {
    // MAX_ATTEMPTS=1: a single counted failure would fail the task at once.
    const worker = await h.startWorker({ MAX_ATTEMPTS: '1', LEASE_MS: '4000' });
    const created = await h.createTask('slow_compute', { seconds: 3 });
    await h.waitFor(created.id, (t) => t.lease?.owner === worker.id && t.checkpoint !== null);

    // Hold the row so the worker's next writes (renewal, checkpoint) block, then kill the
    // sessions they wait on: their queries fail with 57P01, as in a Postgres restart or failover.
    const locker = new pg.Client({ connectionString: h.database.connectionString });
    await locker.connect();
    let killed = 0;
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [created.id]);
      const appName = `mcp-tasks worker ${worker.id}`;
      const waiting = async () =>
        Number(
          (
            await h.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_stat_activity
                WHERE application_name = $1 AND wait_event_type = 'Lock'
                  AND datname = current_database()`,
              [appName],
            )
          )[0]?.n,
        );
      // Both the keeper's renewal and the runner's own write (at most one 1 s slice away).
      const deadline = Date.now() + 3_000;
      while ((await waiting()) < 2 && Date.now() < deadline) await sleep(25);
      expect(await waiting()).toBe(2);
      const rows = await h.query<{ ok: boolean }>(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE application_name = $1 AND wait_event_type = 'Lock'
                  AND datname = current_database()`,
        [appName],
      );
      killed = rows.filter((row) => row.ok).length;
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
    expect(killed).toBe(2);

    const done = await h.waitFor(created.id, isTerminal, 20_000);
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({
      content: [{ type: 'text', text: expect.stringContaining('Computed') as string }],
    });
    expect(done.failures).toBe(0);
    expect(done.attempts).toBe(2);
  });
});
