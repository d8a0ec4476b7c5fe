import { buildTaskSnapshot } from '@mcp-tasks/tasks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alice, createStoreFixture, newTask, type StoreFixture } from '../../test/helpers.js';
import { claimLease } from '../lease/lease.js';
import { completeTask, failTask, requestInput } from '../lease/fenced-task-writes.js';
import { createTask, getTaskForPrincipal } from '../rows/task-repository.js';
import { getTaskViewForPrincipal, getTaskViewsForPrincipals } from './task-view.js';

let fixture: StoreFixture;

beforeAll(async () => {
  fixture = await createStoreFixture('task_view');
});
afterAll(async () => {
  await fixture.close();
});

/** The snapshot a poll builds from the view must be the one the whole row gives. */
async function expectSameSnapshot(taskId: string): Promise<void> {
  const whole = await getTaskForPrincipal(fixture.db, alice.tenant, alice.principal, taskId);
  const view = await getTaskViewForPrincipal(fixture.db, alice.tenant, alice.principal, taskId);
  expect(whole).toBeDefined();
  expect(buildTaskSnapshot(view!)).toEqual(buildTaskSnapshot(whole!));
}

describe('getTaskViewForPrincipal', () => {
  it('gives the snapshot of the whole row, in every status that shows something of its own', async () => {
    const { db } = fixture;
    const working = (await createTask(db, newTask({ statusMessage: 'queued', ttlMs: 3_600_000 })))
      .task.id;
    await expectSameSnapshot(working);

    const waiting = (await createTask(db, newTask())).task.id;
    const fence = (await claimLease(db, waiting, 'w', 30_000))!.fence;
    await requestInput(db, fence, { approve: { message: 'ok?' } }, null, 'need input');
    await expectSameSnapshot(waiting);

    const done = (await createTask(db, newTask({ ttlMs: null, pollIntervalMs: null }))).task.id;
    await completeTask(db, (await claimLease(db, done, 'w', 30_000))!.fence, {
      content: [{ type: 'text', text: 'done' }],
    });
    await expectSameSnapshot(done);

    const failed = (await createTask(db, newTask())).task.id;
    await failTask(
      db,
      (await claimLease(db, failed, 'w', 30_000))!.fence,
      { code: -32603, message: 'broke', data: { why: 'test' } },
      'broke',
    );
    await expectSameSnapshot(failed);
    const view = await getTaskViewForPrincipal(db, alice.tenant, alice.principal, failed);
    expect(view).toMatchObject({ id: failed, status: 'failed', error: { message: 'broke' } });
  });

  it('answers undefined for another owner, an unknown id and a malformed id alike', async () => {
    const { db } = fixture;
    const id = (await createTask(db, newTask())).task.id;
    expect(await getTaskViewForPrincipal(db, 'globex', alice.principal, id)).toBeUndefined();
    expect(await getTaskViewForPrincipal(db, alice.tenant, 'mallory', id)).toBeUndefined();
    expect(
      await getTaskViewForPrincipal(db, alice.tenant, alice.principal, newTask().id),
    ).toBeUndefined();
    expect(
      await getTaskViewForPrincipal(db, alice.tenant, alice.principal, "x' OR 1=1 --"),
    ).toBeUndefined();
  });
});

describe('getTaskViewsForPrincipals', () => {
  it('answers each key on its own, duplicates included, and nothing for a foreign, unknown or malformed id', async () => {
    const { db } = fixture;
    const mine = (await createTask(db, newTask({ statusMessage: 'mine' }))).task.id;
    const other = (await createTask(db, newTask({ statusMessage: 'other' }))).task.id;
    const bob = { tenant: alice.tenant, principal: 'bob' };
    const keys = [
      { ...alice, taskId: mine },
      { ...bob, taskId: mine },
      { ...alice, taskId: other },
      { ...alice, taskId: mine },
      { ...alice, taskId: 'not-a-task-id' },
      { ...alice, taskId: `${mine.slice(0, -1)}${mine.endsWith('A') ? 'B' : 'A'}` },
    ];
    const views = await getTaskViewsForPrincipals(db, keys);
    const one = await getTaskViewForPrincipal(db, alice.tenant, alice.principal, mine);
    const two = await getTaskViewForPrincipal(db, alice.tenant, alice.principal, other);
    expect(views).toEqual([one, undefined, two, one, undefined, undefined]);
    expect(views[0]).toMatchObject({ id: mine, statusMessage: 'mine', status: 'working' });
  });
});
