import { ErrorCode, ProtocolError, type CallContext } from '@mcp-tasks/tool-sdk';
import { startToolTask } from '@mcp-tasks/tool-sdk/testing';
import { describe, expect, it } from 'vitest';
import { APPROVE_KEY, LABEL_KEY, WORK_STEPS, realisticWorkflow } from './realistic-workflow.js';

const call: CallContext = { tasksDeclared: true, clientCapabilities: { elicitation: {} } };

describe('the realistic bench workflow', () => {
  it('asks one MRTR round for a label, then starts the task with it', () => {
    const first = realisticWorkflow.gatherInput!({}, {}, call);
    expect(first.kind).toBe('need_input');
    if (first.kind !== 'need_input') return;
    expect(Object.keys(first.inputRequests)).toEqual([LABEL_KEY]);
    const answered = realisticWorkflow.gatherInput!(
      {},
      { [LABEL_KEY]: { action: 'accept', content: { label: 'run-7' } } },
      call,
    );
    expect(answered).toEqual({ kind: 'ready', arguments: { label: 'run-7' } });
  });

  it('refuses an MRTR answer without a label', () => {
    let thrown: unknown;
    try {
      realisticWorkflow.gatherInput!({}, { [LABEL_KEY]: { action: 'decline' } }, call);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProtocolError);
    expect((thrown as ProtocolError).toJsonRpcError()).toEqual({
      code: ErrorCode.InvalidParams,
      message: `${LABEL_KEY}: expected {label: string}`,
    });
  });

  it('checkpoints one step, pauses once for approval, then checkpoints two more and completes', async () => {
    const run = startToolTask(realisticWorkflow, { label: 'run-7' });
    expect(await run.runUntilStop()).toBe('input_required');
    expect(Object.keys(run.inputRequests)).toEqual([APPROVE_KEY]);
    expect(run.checkpoint).toEqual({ done: 1, asked: true });
    run.answer({ [APPROVE_KEY]: { action: 'accept', content: { approved: true } } });
    expect(await run.runUntilStop()).toBe('completed');
    expect(run.result).toEqual({
      content: [{ type: 'text', text: `run-7: ${WORK_STEPS} steps done` }],
    });
    // Step 1, the pause, steps 2 and 3: four saved outcomes before the completing step.
    expect(run.stepsSaved).toBe(4);
  });
});
