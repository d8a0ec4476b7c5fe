import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreFixture, newTask, type StoreFixture } from '../test/helpers.js';
import { replicaUnavailableReason, startReplicaPair, type ReplicaPair } from '../test/replica.js';
import { createDb, type Db } from './database.js';
import { ReplicaLagError } from './errors.js';
import { migrateToLatest } from './migrate.js';
import { waitUntilVisible } from './replica.js';
import { createTask, getTask } from './task-repository.js';
import { createTaskService, type TaskDispatcher } from './task-service.js';

describe('waitUntilVisible against a primary', () => {
  let fixture: StoreFixture;
  beforeAll(async () => {
    fixture = await createStoreFixture('replica_primary');
  });
  afterAll(() => fixture.close());

  it('returns at once: a server not in recovery has every acknowledged commit', async () => {
    const { commitLsn } = await createTask(fixture.db, newTask());
    await expect(
      waitUntilVisible(fixture.db, commitLsn, { timeoutMs: 1 }),
    ).resolves.toBeUndefined();
  });
});

const unavailable = replicaUnavailableReason();
if (unavailable !== null) console.warn(`streaming replica tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)('waitUntilVisible against a real streaming replica', () => {
  let pair: ReplicaPair;
  let primary: Db;
  let replica: Db;
  beforeAll(async () => {
    pair = await startReplicaPair();
    primary = createDb({ connectionString: pair.primaryUrl, max: 4 });
    replica = createDb({ connectionString: pair.replicaUrl, max: 4 });
    await migrateToLatest(primary);
  }, 120_000);
  afterAll(async () => {
    await primary?.destroy();
    await replica?.destroy();
    await pair?.stop();
  });

  it('returns once the replica replayed the commit, so the row is readable there', async () => {
    const { task, commitLsn } = await createTask(primary, newTask());
    await waitUntilVisible(replica, commitLsn, { timeoutMs: 10_000 });
    expect(await getTask(replica, task.id)).toEqual(task);
  });

  it('throws ReplicaLagError when replay is paused, and succeeds once it resumes', async () => {
    await sql`SELECT pg_wal_replay_pause()`.execute(replica);
    let created: Awaited<ReturnType<typeof createTask>>;
    try {
      created = await createTask(primary, newTask());
      const error = await waitUntilVisible(replica, created.commitLsn, { timeoutMs: 300 }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ReplicaLagError);
      expect((error as ReplicaLagError).commitLsn).toBe(created.commitLsn);
      expect(await getTask(replica, created.task.id)).toBeUndefined();
    } finally {
      await sql`SELECT pg_wal_replay_resume()`.execute(replica);
    }
    await waitUntilVisible(replica, created.commitLsn, { timeoutMs: 10_000 });
    expect(await getTask(replica, created.task.id)).toEqual(created.task);
  });

  it('makes the task service wait for the replica before it enqueues', async () => {
    const enqueued: string[] = [];
    const dispatcher: TaskDispatcher = {
      async enqueue(taskId) {
        // What a worker or a client on the replica would do first: read the task.
        expect(await getTask(replica, taskId)).toBeDefined();
        enqueued.push(taskId);
      },
    };
    const service = createTaskService({
      db: primary,
      readDb: replica,
      dispatcher,
      visibilityTimeoutMs: 10_000,
    });
    const task = await service.createAndDispatch(newTask());
    expect(enqueued).toEqual([task.id]);

    await sql`SELECT pg_wal_replay_pause()`.execute(replica);
    try {
      const lagging = createTaskService({
        db: primary,
        readDb: replica,
        dispatcher,
        visibilityTimeoutMs: 200,
      });
      const withdrawn = newTask();
      await expect(lagging.createAndDispatch(withdrawn)).rejects.toBeInstanceOf(ReplicaLagError);
      expect(enqueued).toEqual([task.id]);
      // Never handed out, so never run: it is cancelled on the primary, not left for the sweeper.
      expect((await getTask(primary, withdrawn.id))?.status).toBe('cancelled');
    } finally {
      await sql`SELECT pg_wal_replay_resume()`.execute(replica);
    }
  });
});
