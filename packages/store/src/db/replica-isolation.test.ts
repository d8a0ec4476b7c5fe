import { startTcpProxy, type TcpProxy } from '@mcp-tasks/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createStoreFixture, newTask, type StoreFixture } from '../../test/helpers.js';
import { createDb, type Db } from './database.js';
import { ReplicaLagError } from '../errors.js';
import { createReplicaWaiter } from './replica.js';
import { createTask } from '../rows/task-repository.js';

/**
 * Issue 24, item 3: the replica wait of one batch of creates must not fail creates that joined
 * after its poll was sent, and a poll that hangs must not hold creates past the visibility bound.
 * The "replica" is the primary seen through a fault-injecting proxy (a primary answers on the
 * first poll, so only the proxy decides what happens).
 */
let fixture: StoreFixture;
let proxy: TcpProxy;
let readDb: Db;

beforeAll(async () => {
  fixture = await createStoreFixture('replica_isolation');
  proxy = await startTcpProxy({ target: fixture.database.connectionString });
});
afterEach(async () => {
  // A read still hung in the black hole would hold destroy() until the pool's read timeout.
  proxy.cut();
  proxy.heal();
  await readDb?.destroy();
});
afterAll(async () => {
  await proxy.close();
  await fixture.close();
});

/** A read pool of one connection through the proxy, opened (so a black hole catches its poll). */
async function warmReadPool(): Promise<Db> {
  readDb = createDb({
    connectionString: proxy.urlFor(fixture.database.connectionString),
    max: 1,
    connectionTimeoutMs: 1_000,
  });
  const { task } = await createTask(fixture.db, newTask());
  await createReplicaWaiter(readDb, { timeoutMs: 1_000 }).waitUntilReadable(task.id);
  return readDb;
}

const settled = (promise: Promise<void>) =>
  promise.then(
    () => 'readable',
    (error: unknown) => error,
  );

describe('the replica waiter, when a poll fails or hangs', () => {
  it('fails only the tasks its failed poll was for, not those that joined while it was in flight', async () => {
    const waiter = createReplicaWaiter(await warmReadPool(), { timeoutMs: 5_000 });
    const [first, second] = await Promise.all([
      createTask(fixture.db, newTask()),
      createTask(fixture.db, newTask()),
    ]);
    proxy.blackhole();
    const firstWait = settled(waiter.waitUntilReadable(first.task.id));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const secondWait = settled(waiter.waitUntilReadable(second.task.id));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The connection under the first poll dies; new connections get through again.
    proxy.heal();
    proxy.cut();
    const firstOutcome = await firstWait;
    expect(firstOutcome).toBeInstanceOf(Error);
    expect(firstOutcome).not.toBeInstanceOf(ReplicaLagError);
    expect(await secondWait).toBe('readable');
  });

  it('answers ReplicaLagError at the visibility bound while a poll hangs, not at the read timeout', async () => {
    const waiter = createReplicaWaiter(await warmReadPool(), { timeoutMs: 500 });
    const { task } = await createTask(fixture.db, newTask());
    proxy.blackhole();
    const started = Date.now();
    const outcome = await settled(waiter.waitUntilReadable(task.id));
    const waitedMs = Date.now() - started;
    expect(outcome).toBeInstanceOf(ReplicaLagError);
    expect((outcome as ReplicaLagError).message).toBe(
      `read replica did not have task ${task.id} within 500 ms (replayed up to unknown)`,
    );
    // The pool's own bound on the hung read is 12 s (statement timeout + read margin); the
    // answer comes at the waiter's 500 ms deadline plus a timer's delay on a loaded machine.
    expect(waitedMs).toBeLessThan(5_000);
  });
});
