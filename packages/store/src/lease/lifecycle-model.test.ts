import fc from 'fast-check';
import {
  applyTaskEvent,
  initialLifecycleState,
  type LifecycleState,
  type Task,
  type TaskEvent,
} from '@mcp-tasks/tasks';
import { taskEventArbitrary } from '@mcp-tasks/tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alice, createStoreFixture, newTask, type StoreFixture } from '../../test/helpers.js';
import type { Db } from '../db/database.js';
import { claimLease, type Fence } from './lease.js';
import {
  completeTask,
  failTask,
  markCancelled,
  requestInput,
  saveCheckpoint,
} from './fenced-task-writes.js';
import {
  createTask,
  getTask,
  recordInputResponses,
  requestCancel,
} from '../rows/task-repository.js';

/**
 * The domain reducer (packages/tasks) is the specification; the store re-implements its rules in
 * SQL conditions and triggers. This test runs random event sequences through both — each event
 * issued the way the product's actors issue it (worker writes under the current fence, client
 * writes owner-scoped) — and requires the same state after every step, and that an event one side
 * refuses is refused by the other and changes nothing.
 */
let fixture: StoreFixture;
let db: Db;

beforeAll(async () => {
  fixture = await createStoreFixture('lifecycle_model');
  db = fixture.db;
});
afterAll(async () => {
  await fixture?.close();
});

type Observed = Pick<
  LifecycleState,
  'status' | 'inputRequests' | 'issuedInputKeys' | 'inputResponses' | 'result' | 'error'
>;

function observe(state: LifecycleState | Task): Observed {
  return {
    status: state.status,
    inputRequests: state.inputRequests,
    issuedInputKeys: [...state.issuedInputKeys].sort(),
    inputResponses: state.inputResponses,
    result: state.result,
    error: state.error,
  };
}

/** Worker events need the lease, which a worker holds only while the task is working. */
function isWorkerEvent(event: TaskEvent, status: LifecycleState['status']): boolean {
  switch (event.type) {
    case 'progress':
    case 'request_input':
    case 'complete':
    case 'fail':
      return true;
    case 'cancel':
      return status === 'working';
    case 'respond':
      return false;
  }
}

async function applyToStore(fence: Fence, event: TaskEvent): Promise<Fence> {
  switch (event.type) {
    case 'progress':
      await saveCheckpoint(db, fence, { step: 'progress' }, event.statusMessage);
      return fence;
    case 'request_input':
      await requestInput(db, fence, event.requests, { step: 'ask' }, event.statusMessage);
      return fence;
    case 'complete':
      await completeTask(db, fence, event.result);
      return fence;
    case 'fail':
      await failTask(db, fence, event.error, event.statusMessage);
      return fence;
    case 'cancel':
      await markCancelled(db, fence, event.statusMessage);
      return fence;
    case 'respond': {
      const { resumed } = await recordInputResponses(db, alice, fence.taskId, event.responses);
      if (!resumed) return fence;
      // What the woken worker does next: claim again, under a new epoch.
      const claim = await claimLease(db, fence.taskId, 'model-worker', 30_000);
      if (claim === null) throw new Error('a resumed task must be claimable');
      return claim.fence;
    }
  }
}

describe('the store against the domain model', () => {
  it('agrees with applyTaskEvent on every random event sequence', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(taskEventArbitrary, { maxLength: 12 }), async (events) => {
        const { task } = await createTask(db, newTask());
        let fence = (await claimLease(db, task.id, 'model-worker', 30_000))!.fence;
        let model = initialLifecycleState();

        for (const event of events) {
          let next: LifecycleState | undefined;
          try {
            next = applyTaskEvent(model, event);
          } catch {
            next = undefined;
          }
          // The domain allows ending a task that waits for input, but no worker holds such a
          // task: in the product only a client cancel (or TTL expiry) ends it.
          const byWorker = isWorkerEvent(event, model.status);
          const reachable = !byWorker || model.status === 'working';
          const before = observe((await getTask(db, task.id))!);

          if (event.type === 'cancel' && !byWorker) {
            await requestCancel(db, alice, task.id);
          } else {
            let refused = false;
            try {
              fence = await applyToStore(fence, event);
            } catch {
              refused = true;
            }
            expect(refused, `${event.type} in ${model.status}`).toBe(
              next === undefined || !reachable,
            );
          }

          const after = observe((await getTask(db, task.id))!);
          if (next === undefined || !reachable) {
            expect(after).toEqual(before);
          } else {
            model = next;
            expect(after).toEqual(observe(model));
          }
        }
      }),
      { numRuns: 60 },
    );
  });
});
