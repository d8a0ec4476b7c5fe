import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreFixture, newTask, type StoreFixture } from '../../test/helpers.js';
import type { Db } from '../db/database.js';
import { StaleLeaseError } from '../errors.js';
import { claimLease, releaseLease, type Fence, type ToolRecord } from './lease.js';
import { createTask } from '../rows/task-repository.js';
import { recordToolMissing, recordToolVersion } from './tool-record.js';

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

/** The record as the next claim would return it, read straight from the row. */
async function storedRecord(taskId: string): Promise<ToolRecord> {
  const row = await db
    .selectFrom('tasks')
    .select(['tool_version', 'tool_missing_since'])
    .where('id', '=', taskId)
    .executeTakeFirstOrThrow();
  return { toolVersion: row.tool_version, toolMissingSince: row.tool_missing_since };
}

describe('tool records (migration 0005)', () => {
  it('starts with no version and no missing mark, as the claim reports it', async () => {
    const { task } = await createTask(db, newTask());
    const claim = await claimLease(db, task.id, 'worker-1', 30_000);
    expect(claim?.tool).toEqual({ toolVersion: null, toolMissingSince: null });
  });

  it('keeps the first moment a worker lacked the tool and measures from it on the database clock', async () => {
    const fence = await claimedTask();
    const first = await recordToolMissing(db, fence);
    expect(first.missingForMs).toBe(0);
    const { toolMissingSince } = await storedRecord(fence.taskId);
    expect(toolMissingSince).toBeInstanceOf(Date);

    await releaseLease(db, fence);
    const again = await claimLease(db, fence.taskId, 'worker-2', 30_000);
    // The next holder learns the first mark from its claim, without another read.
    expect(again?.tool.toolMissingSince).toEqual(toolMissingSince);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await recordToolMissing(db, again!.fence);
    expect(second.missingForMs).toBeGreaterThanOrEqual(50);
    expect((await storedRecord(fence.taskId)).toolMissingSince).toEqual(toolMissingSince);
  });

  it('records the version (clearing the missing mark) and saves a migrated checkpoint with it', async () => {
    const fence = await claimedTask();
    await recordToolMissing(db, fence);
    await recordToolVersion(db, fence, 2, { count: 1 });
    expect(await storedRecord(fence.taskId)).toEqual({ toolVersion: 2, toolMissingSince: null });
    const row = await db
      .selectFrom('tasks')
      .select('checkpoint')
      .where('id', '=', fence.taskId)
      .executeTakeFirstOrThrow();
    expect(row.checkpoint).toEqual({ count: 1 });
  });

  it('refuses every write from a superseded fence', async () => {
    const fence = await claimedTask();
    await releaseLease(db, fence);
    await claimLease(db, fence.taskId, 'worker-2', 30_000);
    await expect(recordToolMissing(db, fence)).rejects.toThrow(StaleLeaseError);
    await expect(recordToolVersion(db, fence, 1)).rejects.toThrow(StaleLeaseError);
  });

  it('refuses a version below 1 in the database itself', async () => {
    const fence = await claimedTask();
    await expect(recordToolVersion(db, fence, 0)).rejects.toThrow(/tasks_tool_version_positive/);
  });
});
