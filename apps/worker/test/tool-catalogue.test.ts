import { newTaskId, type Task } from '@mcp-tasks/tasks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OWNER, createHarness, sleep, type Harness, type WorkerProcess } from './harness.js';

/**
 * Workers whose catalogues differ from each other (MCP_TOOL_MODULES, a rolling deploy): a task
 * is run only by a worker with its tool, at a version that can read its checkpoint.
 */
const TALLY_MODULE = { MCP_TOOL_MODULES: './apps/worker/test/fixtures/tally-tool.ts' };
const v1 = { ...TALLY_MODULE, TALLY_TOOL_VERSION: '1' };
const v2 = { ...TALLY_MODULE, TALLY_TOOL_VERSION: '2' };
const v2Migrating = { ...v2, TALLY_TOOL_MIGRATES: 'true' };

let h: Harness;
beforeAll(async () => {
  h = await createHarness('worker_tool_catalogue');
}, 60_000);
afterEach(async () => {
  await h.stopWorkers();
});
afterAll(async () => {
  await h?.close();
});

function createTally(): Promise<Task> {
  return h.service.createAndWake({
    id: newTaskId(),
    owner: OWNER,
    operation: { method: 'tools/call', toolName: 'tally', arguments: {} },
    ttlMs: null,
    pollIntervalMs: 500,
    statusMessage: 'Tallying',
  });
}

async function toolVersionOf(taskId: string): Promise<number | null> {
  const [row] = await h.query<{ tool_version: number | null }>(
    'SELECT tool_version FROM tasks WHERE id = $1',
    [taskId],
  );
  return row!.tool_version;
}

/** Runs a tally on a worker of `env` until it asks, then stops that worker. */
async function parkedTally(env: Record<string, string>): Promise<string> {
  await h.startWorker(env);
  const { id } = await createTally();
  await h.waitFor(id, (t) => t.status === 'input_required');
  await h.stopWorkers();
  return id;
}

async function answer(taskId: string): Promise<void> {
  expect(await h.service.submitInputResponses(OWNER, taskId, { go: { action: 'accept' } })).toEqual(
    { found: true },
  );
}

async function waitForMetric(worker: WorkerProcess, labels: Record<string, string>) {
  const deadline = Date.now() + 20_000;
  while ((await worker.metric('mcp_worker_tool_mismatches_total', labels)) < 1) {
    if (Date.now() > deadline) throw new Error(`no mismatch counted:\n${worker.process.output()}`);
    await sleep(100);
  }
}

// Each case starts two or three worker processes; on a loaded machine that alone takes a while.
const SLOW = 120_000;

const resultText = (task: Task) =>
  (task.result as { content: { text: string }[] }).content[0]!.text;

describe('tool catalogue mismatches', () => {
  it(
    'a worker without the tool leaves the task for one that has it, counting the mismatch',
    async () => {
      const without = await h.startWorker({ MCP_TOOL_PACKS: 'reports' });
      const { id } = await createTally();
      await waitForMetric(without, { tool: 'tally', reason: 'missing' });
      expect(await h.task(id)).toMatchObject({ status: 'working', failures: 0, lease: null });
      expect(without.process.output()).toContain(
        'tool catalogue mismatch: tool \\"tally\\" is not in its catalogue',
      );

      await h.startWorker(v1);
      const parked = await h.waitFor(id, (t) => t.status === 'input_required');
      expect(parked.failures).toBe(0);
      expect(await toolVersionOf(id)).toBe(1);
    },
    SLOW,
  );

  it(
    'fails the task with a clear error once no worker had the tool for the bound',
    async () => {
      const without = await h.startWorker({
        MCP_TOOL_PACKS: 'reports',
        TOOL_MISSING_FAIL_AFTER_MS: '1500',
      });
      const { id } = await createTally();
      const failed = await h.waitFor(id, (t) => t.status === 'failed', 30_000);
      const message = `No worker ran tool "tally" within 1500 ms (worker ${without.id} does not have it): check MCP_TOOL_PACKS and MCP_TOOL_MODULES on the workers`;
      expect(failed.error).toEqual({ code: -32603, message });
      expect(failed.statusMessage).toBe(`Failed: ${message}`);
      expect(failed.failures).toBe(0);
    },
    SLOW,
  );
});

describe('versioned checkpoints', () => {
  it(
    'records the version that wrote the checkpoint; a newer version migrates it through its hook',
    async () => {
      const id = await parkedTally(v1);
      expect(await toolVersionOf(id)).toBe(1);
      await h.startWorker(v2Migrating);
      await answer(id);
      const done = await h.waitFor(id, (t) => t.status === 'completed');
      expect(resultText(done)).toBe('v2 sum=1');
      expect(await toolVersionOf(id)).toBe(2);
    },
    SLOW,
  );

  it(
    'fails the task clearly when the newer version has no hook for the old checkpoint',
    async () => {
      const id = await parkedTally(v1);
      await h.startWorker(v2);
      await answer(id);
      const failed = await h.waitFor(id, (t) => t.status === 'failed');
      const message =
        'tally: the checkpoint was written by version 1 and version 2 cannot read it (the tool has no migrateCheckpoint hook)';
      expect(failed.error).toEqual({ code: -32603, message });
      expect(failed.failures).toBe(0);
    },
    SLOW,
  );

  it(
    'an older worker leaves a newer checkpoint for a worker with the newer tool',
    async () => {
      const id = await parkedTally(v2);
      expect(await toolVersionOf(id)).toBe(2);
      const older = await h.startWorker(v1);
      await answer(id);
      await waitForMetric(older, { tool: 'tally', reason: 'older_version' });
      expect(await h.task(id)).toMatchObject({ status: 'working', failures: 0 });

      await h.startWorker(v2);
      const done = await h.waitFor(id, (t) => t.status === 'completed', 30_000);
      expect(resultText(done)).toBe('v2 sum=1');
    },
    SLOW,
  );
});
