import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreFixture, newTask, type StoreFixture } from '../../test/helpers.js';
import { completeTask } from '../lease/fenced-task-writes.js';
import { claimLease } from '../lease/lease.js';
import { createTask } from './task-repository.js';
import { countTasksInFlight } from './tenant-load.js';

let fixture: StoreFixture;
beforeAll(async () => {
  fixture = await createStoreFixture('tenant_load');
});
afterAll(async () => {
  await fixture.close();
});

describe('countTasksInFlight', () => {
  it("counts each tenant's unfinished tasks, stopping at the bound, and none of the finished", async () => {
    const { db } = fixture;
    const heavy = { tenant: 'heavy', principal: 'p' };
    for (let i = 0; i < 5; i += 1) await createTask(db, newTask({ owner: heavy }));
    const light = { tenant: 'light', principal: 'p' };
    const done = (await createTask(db, newTask({ owner: light }))).task;
    await createTask(db, newTask({ owner: light }));
    const claim = await claimLease(db, done.id, 'w', 30_000);
    await completeTask(db, claim!.fence, { content: [] }, 'Done.');

    const counts = await countTasksInFlight(db, ['heavy', 'light', 'idle', 'light'], 3);
    expect(Object.fromEntries(counts)).toEqual({ heavy: 3, light: 1, idle: 0 });
    expect((await countTasksInFlight(db, ['heavy'], 100)).get('heavy')).toBe(5);
  });
});
