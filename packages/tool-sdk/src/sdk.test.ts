import { ErrorCode, ProtocolError } from '@mcp-tasks/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resolveCheckpoint } from './checkpoint-version.js';
import { defineTool } from './define-tool.js';
import { startToolTask } from './testing/harness.js';
import type { JsonValue } from '@mcp-tasks/tasks';
import type { StepOutcome } from './tool.js';
import { toolDefinitionProblems } from './validate-tool.js';

/** A two-step tool with one input round; `version` 2 renamed `n` to `count` in its checkpoint. */
function counter(version: 1 | 2, migrate = false) {
  const key = version === 1 ? 'n' : 'count';
  return defineTool<{ to: number }>({
    name: 'counter',
    description: 'counts',
    inputSchema: { type: 'object', properties: { to: { type: 'integer' } } },
    arguments: z.object({ to: z.number().int().min(1) }),
    mode: 'task',
    version,
    task: {
      initialStatusMessage: 'Counting',
      start: () => ({ [key]: 0 }),
      step(raw, args, ctx): Promise<StepOutcome> {
        const state = raw as Record<string, number>;
        const value = state[key];
        if (value === undefined) throw new Error(`no ${key} in ${JSON.stringify(raw)}`);
        if (value === 1 && ctx.inputResponses.more === undefined) {
          return Promise.resolve({
            kind: 'input',
            state: { [key]: value },
            inputRequests: { more: { method: 'elicitation/create', params: {} } },
          });
        }
        if (value + 1 >= args.to)
          return Promise.resolve({
            kind: 'complete',
            result: { content: [], structuredContent: { value: value + 1 } },
          });
        return Promise.resolve({
          kind: 'continue',
          state: { [key]: value + 1 },
          statusMessage: `at ${value + 1}`,
        });
      },
      ...(migrate
        ? { migrateCheckpoint: (state: JsonValue) => ({ count: (state as { n: number }).n }) }
        : {}),
    },
  });
}

describe('resolveCheckpoint', () => {
  const args = { to: 3 };
  it('uses a checkpoint of the current version (an unrecorded one counts as version 1)', () => {
    expect(resolveCheckpoint(counter(1), args, { n: 1 }, null)).toEqual({
      kind: 'current',
      state: { n: 1 },
    });
    expect(resolveCheckpoint(counter(2), args, { count: 1 }, 2)).toEqual({
      kind: 'current',
      state: { count: 1 },
    });
  });
  it('migrates an older checkpoint through the hook', () => {
    expect(resolveCheckpoint(counter(2, true), args, { n: 1 }, 1)).toEqual({
      kind: 'migrated',
      state: { count: 1 },
      fromVersion: 1,
    });
  });
  it('calls an older checkpoint without a hook unreadable, naming both versions', () => {
    expect(resolveCheckpoint(counter(2), args, { n: 1 }, null)).toEqual({
      kind: 'unreadable',
      message:
        'counter: the checkpoint was written by version 1 and version 2 cannot read it (the tool has no migrateCheckpoint hook)',
    });
  });
  it('reports a hook that throws as unreadable with its reason', () => {
    const tool = counter(2);
    tool.task!.migrateCheckpoint = () => {
      throw new Error('field n is gone');
    };
    expect(resolveCheckpoint(tool, args, {}, 1)).toEqual({
      kind: 'unreadable',
      message: 'counter: could not migrate the checkpoint from version 1 to 2: field n is gone',
    });
  });
  it('leaves a checkpoint from a newer version alone', () => {
    expect(resolveCheckpoint(counter(1), args, { count: 1 }, 2)).toEqual({
      kind: 'newer',
      recordedVersion: 2,
    });
  });
});

describe('startToolTask (the in-process harness)', () => {
  it('steps, saves each checkpoint, pauses for input and completes after the answer', async () => {
    const run = startToolTask(counter(1), { to: 3 });
    expect(run.checkpoint).toEqual({ n: 0 });
    expect(await run.runUntilStop()).toBe('input_required');
    expect(run.checkpoint).toEqual({ n: 1 });
    expect(run.statusMessage).toBe('at 1');
    run.answer({ other: {} });
    expect(run.status).toBe('input_required');
    run.answer({ more: { action: 'accept' } });
    expect(run.status).toBe('working');
    expect(await run.runUntilStop()).toBe('completed');
    expect(run.result).toEqual({ content: [], structuredContent: { value: 3 } });
    expect(run.statusMessage).toBe('Completed.');
    expect(run.inputResponses).toEqual({ more: { action: 'accept' } });
  });

  it('cancels between steps and while waiting for input', async () => {
    const between = startToolTask(counter(1), { to: 3 });
    await between.step();
    between.cancel();
    expect(between.status).toBe('cancelled');
    await expect(between.step()).rejects.toThrow('cannot step: the task is cancelled, not working');

    const parked = startToolTask(counter(1), { to: 3 });
    await parked.runUntilStop();
    parked.cancel();
    expect(parked.status).toBe('cancelled');
  });

  it('turns a thrown ProtocolError into a failed task with that error', async () => {
    const tool = counter(1);
    tool.task!.step = () =>
      Promise.reject(new ProtocolError(ErrorCode.InvalidParams, 'bad answer', { key: 'more' }));
    const run = startToolTask(tool, { to: 3 });
    expect(await run.runUntilStop()).toBe('failed');
    expect(run.error).toEqual({ code: -32602, message: 'bad answer', data: { key: 'more' } });
  });

  it('rethrows an unexpected error and keeps the checkpoint for the retry', async () => {
    const tool = counter(1);
    const step = tool.task!.step;
    let calls = 0;
    tool.task!.step = (state, args, ctx) =>
      ++calls === 1 ? Promise.reject(new Error('flaky')) : step(state, args, ctx);
    const run = startToolTask(tool, { to: 3 });
    await expect(run.step()).rejects.toThrow('flaky');
    expect(run.status).toBe('working');
    expect(run.checkpoint).toEqual({ n: 0 });
    await run.step();
    expect(run.checkpoint).toEqual({ n: 1 });
  });

  it('resumes a checkpoint on a newer version: migrated through the hook, or failed without one', async () => {
    const old = startToolTask(counter(1), { to: 3 });
    await old.runUntilStop();
    old.answer({ more: { action: 'accept' } });

    const migrated = old.resumeOn(counter(2, true));
    expect(await migrated.runUntilStop()).toBe('completed');
    expect(migrated.checkpointVersion).toBe(2);

    const again = startToolTask(counter(1), { to: 3 });
    await again.runUntilStop();
    again.answer({ more: { action: 'accept' } });
    const stuck = again.resumeOn(counter(2));
    expect(await stuck.runUntilStop()).toBe('failed');
    expect(stuck.error?.code).toBe(-32603);
  });
});

describe('toolDefinitionProblems', () => {
  it('names every wrong field of a loaded definition', () => {
    expect(
      toolDefinitionProblems({
        name: 'bad name!',
        inputSchema: { type: 'string' },
        mode: 'task',
        version: 0,
      }),
    ).toEqual([
      'name: must be 1-128 characters of A-Z a-z 0-9 _ . -',
      'description: must be a string',
      'inputSchema: must be a JSON Schema object with type "object"',
      'arguments: must be a zod schema',
      'version: must be a positive integer',
      'task: mode task needs a task program with start and step',
    ]);
    expect(toolDefinitionProblems(counter(1))).toEqual([]);
  });
});

describe('ProtocolError across package copies', () => {
  it('recognises a ProtocolError made by another copy of the package', () => {
    const foreign = Object.assign(new Error('x'), {
      code: -32602,
      [Symbol.for('@mcp-tasks/protocol.ProtocolError')]: true,
    });
    expect(foreign instanceof ProtocolError).toBe(true);
    expect(new Error('x') instanceof ProtocolError).toBe(false);
    class Narrower extends ProtocolError {}
    expect(new ProtocolError(-32602, 'x') instanceof Narrower).toBe(false);
    expect(new Narrower(-32602, 'x') instanceof Narrower).toBe(true);
  });
});
