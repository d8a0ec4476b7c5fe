import { fileURLToPath } from 'node:url';
import { claimLease } from '@mcp-tasks/store';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JournalHooks } from './fixtures/journal-tool.js';
import { createHarness, type Harness } from './harness.js';
import type { Worker } from '../src/worker.js';

// ctx.transaction through the real step loop: a step's own writes commit with its checkpoint
// under the lease's fence, or not at all (docs/adr/0005-exactly-once-step-effects.md).

const JOURNAL_MODULE = fileURLToPath(new URL('./fixtures/journal-tool.ts', import.meta.url));
const globals = globalThis as { journalHooks?: JournalHooks };

let h: Harness;
let worker: Worker;

beforeAll(async () => {
  h = await createHarness('worker_step_effects');
  await h.query(
    'CREATE TABLE journal (task_id text NOT NULL, step int NOT NULL, idempotency_key text NOT NULL)',
  );
  worker = await h.buildWorker({
    MCP_TOOL_MODULES: JOURNAL_MODULE,
    LEASE_MS: '5000',
    RETRY_BASE_DELAY_MS: '1',
    RETRY_MAX_DELAY_MS: '1',
    LOG_LEVEL: 'silent',
  });
}, 60_000);

afterEach(() => {
  delete globals.journalHooks;
});

afterAll(async () => {
  await h?.close();
});

async function journalOf(taskId: string) {
  return await h.query<{ step: number; idempotency_key: string }>(
    'SELECT step, idempotency_key FROM journal WHERE task_id = $1 ORDER BY step, idempotency_key',
    [taskId],
  );
}

/** Runs attempts on the in-process worker until the task leaves `working`. */
async function runToEnd(taskId: string): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < 10; i += 1) {
    outcomes.push(await worker.runner.run(taskId));
    if ((await h.task(taskId)).status !== 'working') return outcomes;
  }
  throw new Error(`task ${taskId} still working after ${JSON.stringify(outcomes)}`);
}

describe('a step that writes through ctx.transaction', () => {
  it('commits each step’s row with its checkpoint, keyed by task and step index', async () => {
    const task = await h.insertTask('journal', { steps: 3, transactional: true });
    expect(await runToEnd(task.id)).toEqual(['completed']);
    expect(await journalOf(task.id)).toEqual([
      { step: 0, idempotency_key: `${task.id}:0` },
      { step: 1, idempotency_key: `${task.id}:1` },
      { step: 2, idempotency_key: `${task.id}:2` },
    ]);
  });

  it('re-runs a step that failed after its write with none of that write visible', async () => {
    const task = await h.insertTask('journal', { steps: 3, transactional: true });
    let failed = false;
    globals.journalHooks = {
      afterWrite(_taskId, stepIndex) {
        if (stepIndex !== 1 || failed) return Promise.resolve();
        failed = true;
        return Promise.reject(new Error('killed between the write and the checkpoint'));
      },
    };
    expect(await runToEnd(task.id)).toEqual(['retry_scheduled', 'completed']);
    // Step 1 ran twice; its row is there once, with the same key both runs were given.
    expect(await journalOf(task.id)).toEqual([
      { step: 0, idempotency_key: `${task.id}:0` },
      { step: 1, idempotency_key: `${task.id}:1` },
      { step: 2, idempotency_key: `${task.id}:2` },
    ]);
  });

  it('writes nothing for a step whose lease was taken over before it ended', async () => {
    const task = await h.insertTask('journal', { steps: 2, transactional: true });
    globals.journalHooks = {
      async afterWrite(taskId) {
        // Another worker claims after the lease ran out, while this step is still running.
        await h.query(
          `UPDATE tasks SET lease_expires_at = now() - interval '1 second' WHERE id = $1`,
          [taskId],
        );
        expect(await claimLease(h.db, taskId, 'another-worker', 60_000)).not.toBeNull();
      },
    };
    expect(await worker.runner.run(task.id)).toBe('lease_lost');
    expect(await journalOf(task.id)).toEqual([]);
    expect(await h.task(task.id)).toMatchObject({
      status: 'working',
      checkpoint: null,
      lease: { owner: 'another-worker' },
    });
  });

  it('leaves a step without a transaction as before: checkpointed, nothing written for it', async () => {
    const task = await h.insertTask('journal', { steps: 2, transactional: false });
    expect(await runToEnd(task.id)).toEqual(['completed']);
    expect(await journalOf(task.id)).toEqual([]);
    const [row] = await h.query<{ steps_saved: number }>(
      'SELECT steps_saved FROM tasks WHERE id = $1',
      [task.id],
    );
    expect(row).toEqual({ steps_saved: 1 });
  });
});
