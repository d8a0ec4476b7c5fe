import { getTask } from '@mcp-tasks/store';
import { describe, expect, it } from 'vitest';
import { buildGateway, useGatewayUnderTest } from './support/harness.js';
import { accept, rpc, type RpcOptions } from './support/rpc.js';

// Input gathered before a task exists (MRTR, R13): requestState rounds, retries of the final round,
// and tampered, replayed and expired state.

const { infra, gw } = useGatewayUnderTest('gw_mrtr');

describe('MRTR before task creation (R13)', () => {
  const call = { name: 'test_tool_with_task', arguments: {} };

  async function firstRound(options: RpcOptions = {}) {
    const reply = await rpc(gw.app, 'tools/call', call, options);
    expect(reply.result.resultType).toBe('input_required');
    return reply.result as { requestState: string; inputRequests: Record<string, unknown> };
  }

  it('asks for input with a requestState, then creates the task from the gathered answer', async () => {
    const round = await firstRound();
    expect(Object.keys(round.inputRequests)).toEqual(['user_name']);
    expect(round).not.toHaveProperty('taskId');
    expect(typeof round.requestState).toBe('string');
    const reply = await rpc(
      gw.app,
      'tools/call',
      {
        ...call,
        inputResponses: { user_name: accept({ name: 'Alice' }) },
        requestState: round.requestState,
      },
      { id: 2 },
    );
    expect(reply.result.resultType).toBe('task');
    expect(reply.result).not.toHaveProperty('requestState');
    const stored = await getTask(infra.db, reply.result.taskId as string);
    expect(stored?.operation.arguments).toEqual({ name: 'Alice' });
  });

  it('answers a retried final round with the same task, and different answers with another', async () => {
    const round = await firstRound();
    const finalRound = (name: string) =>
      rpc(gw.app, 'tools/call', {
        ...call,
        inputResponses: { user_name: accept({ name }) },
        requestState: round.requestState,
      });
    const first = await finalRound('Alice');
    const retried = await finalRound('Alice');
    expect(first.result.resultType).toBe('task');
    expect(retried.result.taskId).toBe(first.result.taskId);
    expect(retried.result.createdAt).toBe(first.result.createdAt);
    const other = await finalRound('Bob');
    expect(other.result.taskId).not.toBe(first.result.taskId);
    expect(other.result.taskId).toMatch(/^tsk_[A-Za-z0-9_-]{24}$/);
    expect((await getTask(infra.db, other.result.taskId as string))?.operation.arguments).toEqual({
      name: 'Bob',
    });
  });

  it('answers a tampered requestState with -32602', async () => {
    const round = await firstRound();
    const tampered = `${round.requestState.slice(0, -2)}${round.requestState.endsWith('AA') ? 'BB' : 'AA'}`;
    const reply = await rpc(gw.app, 'tools/call', {
      ...call,
      inputResponses: { user_name: accept({ name: 'A' }) },
      requestState: tampered,
    });
    expect(reply.status).toBe(400);
    expect(reply.error.code).toBe(-32602);
  });

  it('answers a requestState replayed by another principal or with other arguments with -32602', async () => {
    const round = await firstRound();
    const inputResponses = { user_name: accept({ name: 'A' }) };
    const replayed = await rpc(
      gw.app,
      'tools/call',
      { ...call, inputResponses, requestState: round.requestState },
      { as: 'bob' },
    );
    expect(replayed.error.code).toBe(-32602);
    const otherArgs = await rpc(gw.app, 'tools/call', {
      ...call,
      arguments: { name: 'sneaky' },
      inputResponses,
      requestState: round.requestState,
    });
    expect(otherArgs.error.code).toBe(-32602);
  });

  it('answers an expired requestState with -32602', async () => {
    const shortLived = buildGateway(infra, { config: { requestStateTtlMs: 1 } });
    const first = await rpc(shortLived.app, 'tools/call', call);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const reply = await rpc(shortLived.app, 'tools/call', {
      ...call,
      inputResponses: { user_name: accept({ name: 'A' }) },
      requestState: first.result.requestState,
    });
    expect(reply.status).toBe(400);
    expect(reply.error.code).toBe(-32602);
    expect(reply.error.message).toContain('expired');
  });
});
