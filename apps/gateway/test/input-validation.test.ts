import { claimLease, getTask, requestInput } from '@mcp-tasks/store';
import type { InputRequests } from '@mcp-tasks/tasks';
import { describe, expect, it } from 'vitest';
import { useGatewayUnderTest } from './support/harness.js';
import { createReportTask, rpc } from './support/rpc.js';

/** Issue 11, item 0: a malformed answer to an outstanding key is refused where it is made. */
const { infra, gw } = useGatewayUnderTest('gw_input_validation');

const approveOutline = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Approve this outline?',
    requestedSchema: {
      type: 'object',
      properties: { approved: { type: 'boolean' } },
      required: ['approved'],
    },
  },
};
const chooseFormat = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Which format?',
    requestedSchema: {
      type: 'object',
      properties: { format: { type: 'string', enum: ['markdown', 'html'] } },
      required: ['format'],
    },
  },
};
const ENVELOPE_MISSING =
  'Invalid inputResponses.approve_outline: action: must be one of "accept", "decline", "cancel"; expected an ElicitResult: {"action": "accept", "content": {approved: boolean (required)}} or {"action": "decline"} or {"action": "cancel"}';

async function parkedTask(requests: InputRequests): Promise<string> {
  const taskId = await createReportTask(gw.app);
  const claim = await claimLease(infra.db, taskId, 'test-worker', 30_000);
  if (claim === null) throw new Error('not claimable');
  await requestInput(infra.db, claim.fence, requests, { phase: 'outline' }, 'Need answers');
  return taskId;
}

describe('tasks/update validates answers to outstanding keys', () => {
  it('refuses content sent without its ElicitResult envelope, changes nothing, then takes the right answer', async () => {
    const taskId = await parkedTask({ approve_outline: approveOutline });
    const before = await getTask(infra.db, taskId);
    const wrong = await rpc(gw.app, 'tasks/update', {
      taskId,
      inputResponses: { approve_outline: { approved: true } },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32602,
        message: ENVELOPE_MISSING,
        data: {
          inputResponses: [
            {
              key: 'approve_outline',
              problem: 'action: must be one of "accept", "decline", "cancel"',
              expected:
                'an ElicitResult: {"action": "accept", "content": {approved: boolean (required)}} or {"action": "decline"} or {"action": "cancel"}',
            },
          ],
        },
      },
    });
    expect(await getTask(infra.db, taskId)).toEqual(before);

    const right = await rpc(gw.app, 'tasks/update', {
      taskId,
      inputResponses: { approve_outline: { action: 'accept', content: { approved: true } } },
    });
    expect(right.status).toBe(200);
    const resumed = await getTask(infra.db, taskId);
    expect(resumed?.status).toBe('working');
    expect(resumed?.inputResponses).toEqual({
      approve_outline: { action: 'accept', content: { approved: true } },
    });
  });

  it('refuses a whole update when one of its answers is bad, naming only that key', async () => {
    const taskId = await parkedTask({
      approve_outline: approveOutline,
      choose_format: chooseFormat,
    });
    const before = await getTask(infra.db, taskId);
    const reply = await rpc(gw.app, 'tasks/update', {
      taskId,
      inputResponses: {
        approve_outline: { action: 'accept', content: { approved: true } },
        choose_format: { action: 'accept', content: { format: 'pdf' } },
      },
    });
    expect(reply.status).toBe(400);
    expect(reply.error.code).toBe(-32602);
    expect(reply.error.message).toBe(
      'Invalid inputResponses.choose_format: content.format: must be one of "markdown", "html"; expected an ElicitResult: {"action": "accept", "content": {format: "markdown" | "html" (required)}} or {"action": "decline"} or {"action": "cancel"}',
    );
    expect(await getTask(infra.db, taskId)).toEqual(before);
  });

  it('still acknowledges and ignores answers to keys that are not outstanding, whatever their shape (R17)', async () => {
    const taskId = await parkedTask({ approve_outline: approveOutline });
    const before = await getTask(infra.db, taskId);
    const reply = await rpc(gw.app, 'tasks/update', {
      taskId,
      inputResponses: { never_issued: { ignored: true } },
    });
    expect(reply.status).toBe(200);
    expect(reply.result.resultType).toBe('complete');
    expect(await getTask(infra.db, taskId)).toEqual(before);
  });

  it('accepts a decline without content', async () => {
    const taskId = await parkedTask({ approve_outline: approveOutline });
    const reply = await rpc(gw.app, 'tasks/update', {
      taskId,
      inputResponses: { approve_outline: { action: 'decline' } },
    });
    expect(reply.status).toBe(200);
    expect((await getTask(infra.db, taskId))?.status).toBe('working');
  });
});

describe('synchronous MRTR rounds validate inputResponses against the round they answer', () => {
  it('refuses an answer that does not fit the form with -32602 and accepts the right one', async () => {
    const call = { name: 'test_streaming_elicitation', arguments: {} };
    const round = await rpc(gw.app, 'tools/call', call);
    expect(round.result.resultType).toBe('input_required');
    const requestState = round.result.requestState as string;
    const wrong = await rpc(gw.app, 'tools/call', {
      ...call,
      requestState,
      inputResponses: { favourite_colour: { action: 'accept', content: { colour: 7 } } },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.error).toEqual({
      code: -32602,
      message:
        'Invalid inputResponses.favourite_colour: content.colour: must be a string, got a number; expected an ElicitResult: {"action": "accept", "content": {colour: string (required)}} or {"action": "decline"} or {"action": "cancel"}',
      data: {
        inputResponses: [
          {
            key: 'favourite_colour',
            problem: 'content.colour: must be a string, got a number',
            expected:
              'an ElicitResult: {"action": "accept", "content": {colour: string (required)}} or {"action": "decline"} or {"action": "cancel"}',
          },
        ],
      },
    });
    // The same state still works: nothing was consumed.
    const right = await rpc(gw.app, 'tools/call', {
      ...call,
      requestState,
      inputResponses: { favourite_colour: { action: 'accept', content: { colour: 'teal' } } },
    });
    expect(right.status).toBe(200);
    expect(right.result.resultType).toBe('complete');
  });
});
