import { ProtocolError } from '@mcp-tasks/tool-sdk';
import { describe, expect, it } from 'vitest';
import { context, runUntilStop } from '../../test/drive.js';
import { confirmDelete } from './confirm-delete.js';
import { failingJob } from './failing-job.js';
import { greet } from './greet.js';
import { multiInput } from './multi-input.js';
import { protocolErrorJob } from './protocol-error-job.js';
import { slowCompute } from './slow-compute.js';
import { testToolWithTask } from './test-tool-with-task.js';

const call = { tasksDeclared: true, clientCapabilities: {} };

describe('greet', () => {
  it('answers synchronously with Hello, {name}!', async () => {
    expect(greet.mode).toBe('sync');
    const result = await greet.runSync!(greet.arguments.parse({ name: 'World' }), call);
    expect(result).toEqual({ content: [{ type: 'text', text: 'Hello, World!' }] });
  });
});

describe('slow_compute', () => {
  it('prefers a task from one second up', () => {
    expect(slowCompute.mode).toBe('task-optional');
    expect(slowCompute.prefersTask!(slowCompute.arguments.parse({ seconds: 0 }))).toBe(false);
    expect(slowCompute.prefersTask!(slowCompute.arguments.parse({ seconds: 1, label: 'x' }))).toBe(
      true,
    );
  });

  it('answers seconds 0 synchronously with non-empty content', async () => {
    const result = await slowCompute.runSync!(slowCompute.arguments.parse({ seconds: 0 }), call);
    expect(result.content).toEqual([{ type: 'text', text: 'Computed computation in 0 s' }]);
  });

  it('sleeps in one-second slices, checkpointing elapsed time, then completes', async () => {
    const args = slowCompute.arguments.parse({ seconds: 0.003, label: 'quick' });
    const run = await runUntilStop(slowCompute, args, slowCompute.task!.start(args), context());
    expect(run.last).toEqual({
      kind: 'complete',
      result: { content: [{ type: 'text', text: 'Computed quick in 0.003 s' }] },
    });
  });

  it('stops a slice at once when aborted', async () => {
    const args = slowCompute.arguments.parse({ seconds: 60 });
    const controller = new AbortController();
    const step = slowCompute.task!.step({ elapsedMs: 0 }, args, context({}, controller.signal));
    controller.abort('cancel');
    await expect(step).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('rejects negative seconds', () => {
    expect(slowCompute.arguments.safeParse({ seconds: -1 }).success).toBe(false);
  });
});

describe('failing_job', () => {
  it('completes with isError true', async () => {
    const run = await runUntilStop(failingJob, {}, failingJob.task!.start({}), context());
    expect(run.last).toMatchObject({ kind: 'complete', result: { isError: true } });
    if (run.last.kind === 'complete') expect(run.last.result.content.length).toBeGreaterThan(0);
  });
});

describe('protocol_error_job', () => {
  it('throws a ProtocolError with a JSON-RPC code and message', async () => {
    const step = protocolErrorJob.task!.step(protocolErrorJob.task!.start({}), {}, context());
    await expect(step).rejects.toBeInstanceOf(ProtocolError);
    await expect(step).rejects.toMatchObject({
      code: -32603,
      message: expect.any(String) as string,
    });
  });
});

describe('confirm_delete', () => {
  const args = confirmDelete.arguments.parse({ filename: 'a.txt' });

  it('parks on one elicitation asking {confirm: boolean}', async () => {
    const run = await runUntilStop(confirmDelete, args, confirmDelete.task!.start(args), context());
    if (run.last.kind !== 'input') throw new Error('expected input');
    const keys = Object.keys(run.last.inputRequests);
    expect(keys).toHaveLength(1);
    expect(run.last.inputRequests[keys[0]!]).toMatchObject({
      method: 'elicitation/create',
      params: { requestedSchema: { properties: { confirm: { type: 'boolean' } } } },
    });
  });

  it('completes after accept with confirm true', async () => {
    const first = await runUntilStop(
      confirmDelete,
      args,
      confirmDelete.task!.start(args),
      context(),
    );
    const ctx = context({ confirm_delete: { action: 'accept', content: { confirm: true } } });
    const done = await runUntilStop(confirmDelete, args, first.state, ctx);
    expect(done.last).toMatchObject({
      kind: 'complete',
      result: { content: [{ type: 'text', text: 'Deleted a.txt' }] },
    });
  });

  it('keeps the file on confirm false and cancels on decline', async () => {
    const first = await runUntilStop(
      confirmDelete,
      args,
      confirmDelete.task!.start(args),
      context(),
    );
    const kept = await confirmDelete.task!.step(
      first.state,
      args,
      context({ confirm_delete: { action: 'accept', content: { confirm: false } } }),
    );
    expect(kept).toMatchObject({
      kind: 'complete',
      result: { structuredContent: { deleted: false } },
    });
    const declined = await confirmDelete.task!.step(
      first.state,
      args,
      context({ confirm_delete: { action: 'decline' } }),
    );
    expect(declined.kind).toBe('cancel');
  });
});

describe('multi_input', () => {
  it('asks two keys at once and reports both answers', async () => {
    const first = await runUntilStop(multiInput, {}, multiInput.task!.start({}), context());
    if (first.last.kind !== 'input') throw new Error('expected input');
    expect(Object.keys(first.last.inputRequests)).toEqual(['first', 'second']);
    const done = await runUntilStop(
      multiInput,
      {},
      first.state,
      context({
        first: { action: 'accept', content: { name: 'A' } },
        second: { action: 'accept', content: { name: 'B' } },
      }),
    );
    expect(done.last).toEqual({
      kind: 'complete',
      result: { content: [{ type: 'text', text: 'Got A and B' }] },
    });
  });
});

describe('test_tool_with_task', () => {
  it('asks user_name {name: string} in round 1', () => {
    const outcome = testToolWithTask.gatherInput!({}, {}, call);
    expect(outcome).toEqual({
      kind: 'need_input',
      inputRequests: {
        user_name: {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: 'What is your name?',
            requestedSchema: {
              type: 'object',
              properties: { name: { type: 'string' } },
              required: ['name'],
            },
          },
        },
      },
    });
  });

  it('becomes a task whose result text contains the name', async () => {
    const outcome = testToolWithTask.gatherInput!(
      {},
      { user_name: { action: 'accept', content: { name: 'Alice' } } },
      call,
    );
    if (outcome.kind !== 'ready') throw new Error('expected ready');
    const args = testToolWithTask.arguments.parse(outcome.arguments);
    const run = await runUntilStop(
      testToolWithTask,
      args,
      testToolWithTask.task!.start(args),
      context(),
    );
    if (run.last.kind !== 'complete') throw new Error('expected complete');
    expect((run.last.result.content[0] as { text: string }).text).toContain('Alice');
  });

  it('refuses a declined name with -32602', () => {
    expect(() =>
      testToolWithTask.gatherInput!({}, { user_name: { action: 'decline' } }, call),
    ).toThrow(expect.objectContaining({ code: -32602 }) as Error);
  });
});
