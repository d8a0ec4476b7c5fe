import { startTcpProxy, type TcpProxy } from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, isTerminal, sleep, type Harness } from './harness.js';

let h: Harness;
let proxy: TcpProxy;

beforeAll(async () => {
  h = await createHarness('worker_pg_outage');
  proxy = await startTcpProxy({ target: h.database.connectionString });
}, 60_000);

afterAll(async () => {
  await h?.close();
  await proxy?.close();
});

const LEASE_MS = 2_000;

describe('a Postgres outage', () => {
  it('longer than LEASE_MS while a task runs costs the task no failure', async () => {
    // MAX_ATTEMPTS=1: a single counted failure would fail the task ("the task's worker was lost").
    // Every connection of the worker (pool, sweeper leadership, LISTEN) goes through the proxy.
    const worker = await h.startWorker({
      DATABASE_URL: proxy.urlFor(h.database.connectionString),
      MAX_ATTEMPTS: '1',
      LEASE_MS: String(LEASE_MS),
    });
    const created = await h.createTask('slow_compute', { seconds: 4 });
    await h.waitFor(created.id, (t) => t.lease?.owner === worker.id && t.checkpoint !== null);

    // The worker loses Postgres (as in a restart or failover): open connections reset, new ones
    // refused, for three lease periods.
    proxy.refuse();
    proxy.cut();
    await sleep(3 * LEASE_MS);
    const during = await h.task(created.id);
    expect(during.status).toBe('working');
    proxy.heal();

    const done = await h.waitFor(created.id, isTerminal, 30_000);
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({
      content: [{ type: 'text', text: 'Computed computation in 4 s' }],
    });
    expect(done.failures).toBe(0);
  }, 90_000);
});
