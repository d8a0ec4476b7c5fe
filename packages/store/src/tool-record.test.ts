import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreFixture, newTask, type StoreFixture } from '../test/helpers.js';
import type { Db } from './database.js';
import { StaleLeaseError } from './errors.js';
import { claimLease, releaseLease, type Fence } from './lease.js';
import { createTask } from './task-repository.js';
import { readToolRecord, recordToolMissing, recordToolVersion } from './tool-record.js';

let fixture: StoreFixture;
let db: Db;
beforeAll(async () => {
  fixture = await createStoreFixture('tool_record');
  db = fixture.db;
});
afterAll(() => fixture.close());

async function claimedTask(): Promise<Fence> {
  const { task } = await createTask(db, newTask());
  const claim = await claimLease(db, task.id, 'worker-1', 30_000);
  if (claim === null) throw new Error('fresh task not claimable');
  return claim.fence;
}

describe('tool records (migration 0005)', () => {
  it('starts with no version and no missing mark', async () => {
    const fence = await claimedTask();
    expect(await readToolRecord(db, fence)).toEqual({ toolVersion: null, toolMissingSince: null });
  });

  it('keeps the first moment a worker lacked the tool and measures from it on the database clock', async () => {
    const fence = await claimedTask();
    const first = await recordToolMissing(db, fence);
    expect(first.missingForMs).toBe(0);
    const { toolMissingSince } = await readToolRecord(db, fence);
    expect(toolMissingSince).toBeInstanceOf(Date);

    await releaseLease(db, fence);
    const again = await claimLease(db, fence.taskId, 'worker-2', 30_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await recordToolMissing(db, again!.fence);
    expect(second.missingForMs).toBeGreaterThanOrEqual(50);
    expect((await readToolRecord(db, again!.fence)).toolMissingSince).toEqual(toolMissingSince);
  });

  it('records the version (clearing the missing mark) and saves a migrated checkpoint with it', async () => {
    const fence = await claimedTask();
    await recordToolMissing(db, fence);
    await recordToolVersion(db, fence, 2, { count: 1 });
    expect(await readToolRecord(db, fence)).toEqual({ toolVersion: 2, toolMissingSince: null });
    const row = await db
      .selectFrom('tasks')
      .select('checkpoint')
      .where('id', '=', fence.taskId)
      .executeTakeFirstOrThrow();
    expect(row.checkpoint).toEqual({ count: 1 });
  });

  it('refuses every write and read from a superseded fence', async () => {
    const fence = await claimedTask();
    await releaseLease(db, fence);
    await claimLease(db, fence.taskId, 'worker-2', 30_000);
    await expect(readToolRecord(db, fence)).rejects.toThrow(StaleLeaseError);
    await expect(recordToolMissing(db, fence)).rejects.toThrow(StaleLeaseError);
    await expect(recordToolVersion(db, fence, 1)).rejects.toThrow(StaleLeaseError);
  });

  it('refuses a version below 1 in the database itself', async () => {
    const fence = await claimedTask();
    await expect(recordToolVersion(db, fence, 0)).rejects.toThrow(/tasks_tool_version_positive/);
  });
});
