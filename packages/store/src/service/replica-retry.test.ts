import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTask } from '../../test/helpers.js';
import { replicaUnavailableReason, startReplicaPair, type ReplicaPair } from '@mcp-tasks/testing';
import { createDb, type Db } from '../db/database.js';
import { ReplicaLagError } from '../errors.js';
import { migrateToLatest } from '../db/migrate.js';
import { getTask } from '../rows/task-repository.js';
import type { WakeUpQueue } from '../wake-up/outbox.js';
import { createTaskService } from './task-service.js';

/**
 * Issue 11, item 4: a task whose id a retry can derive again (the final MRTR round) must never be
 * withdrawn after the replica wait times out, or the retry would get a handle to a cancelled task.
 */
const unavailable = replicaUnavailableReason();
if (unavailable !== null) console.warn(`streaming replica tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)('retrying a create after replica lag', () => {
  let pair: ReplicaPair;
  let primary: Db;
  let replica: Db;
  const enqueued: string[] = [];
  const wakeUpQueue: WakeUpQueue = {
    wake(taskId) {
      enqueued.push(taskId);
      return Promise.resolve();
    },
  };
  const service = (visibilityTimeoutMs: number) =>
    createTaskService({ db: primary, readDb: replica, wakeUpQueue, visibilityTimeoutMs });

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

  const pause = () => sql`SELECT pg_wal_replay_pause()`.execute(replica);
  const resume = () => sql`SELECT pg_wal_replay_resume()`.execute(replica);

  it('keeps a derived-id task after a timed-out wait; the retry gets it working and woken', async () => {
    const input = newTask();
    await pause();
    try {
      await expect(service(200).createAndWake(input, { derivedId: true })).rejects.toBeInstanceOf(
        ReplicaLagError,
      );
      expect((await getTask(primary, input.id))?.status).toBe('working');
      expect(enqueued).not.toContain(input.id);
    } finally {
      await resume();
    }
    const retrying = service(10_000);
    const retried = await retrying.createAndWake(input, { derivedId: true });
    expect(retried.id).toBe(input.id);
    expect(retried.status).toBe('working');
    expect((await getTask(primary, input.id))?.status).toBe('working');
    // The first attempt never woke it, so the retry does (just after its reply).
    await retrying.settleWakeUps();
    expect(enqueued.filter((id) => id === input.id)).toEqual([input.id]);
  });

  it('never withdraws a task another gateway hands to a retry while the first wait times out', async () => {
    const input = newTask();
    const serviceB = service(20_000);
    await pause();
    let resumed = false;
    try {
      const gatewayA = service(300).createAndWake(input, { derivedId: true });
      // Gateway B gets the client's retry while A is still waiting.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const gatewayB = serviceB.createAndWake(input, { derivedId: true });
      await expect(gatewayA).rejects.toBeInstanceOf(ReplicaLagError);
      await resume();
      resumed = true;
      const handle = await gatewayB;
      expect(handle.id).toBe(input.id);
      expect(handle.status).toBe('working');
    } finally {
      if (!resumed) await resume();
    }
    expect((await getTask(primary, input.id))?.status).toBe('working');
    await serviceB.settleWakeUps();
    expect(enqueued).toContain(input.id);
  });

  it('still withdraws a task with a fresh random id: no retry can ever name it', async () => {
    const input = newTask();
    await pause();
    try {
      await expect(service(200).createAndWake(input)).rejects.toBeInstanceOf(ReplicaLagError);
    } finally {
      await resume();
    }
    expect((await getTask(primary, input.id))?.status).toBe('cancelled');
  });
});
