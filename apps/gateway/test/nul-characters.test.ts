import { claimLease, getTask, requestInput } from '@mcp-tasks/store';
import { describe, expect, it } from 'vitest';
import { useGatewayUnderTest } from './support/harness.js';
import { createReportTask, rpc } from './support/rpc.js';

/** Issue 11, item 8: Postgres cannot store U+0000, so a NUL must be -32602, never a 500. */
const { infra, gw } = useGatewayUnderTest('gw_nul');

const NUL_PROBLEM = 'contains a NUL character (U+0000), which cannot be stored';

/** A report task whose worker asked for a `title` (a string field): tasks/update answers it. */
async function taskAskingForATitle(): Promise<string> {
  const taskId = await createReportTask(gw.app);
  const claim = await claimLease(infra.db, taskId, 'test-worker', 30_000);
  if (claim === null) throw new Error('not claimable');
  const ask = {
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: 'Title?',
      requestedSchema: { type: 'object', properties: { title: { type: 'string' } } },
    },
  };
  await requestInput(infra.db, claim.fence, { title: ask }, { phase: 'outline' }, 'Need a title');
  return taskId;
}

describe('a NUL character in params', () => {
  it('in a task-creating round answer is -32602 naming its path', async () => {
    const call = { name: 'test_tool_with_task', arguments: {} };
    const round = await rpc(gw.app, 'tools/call', call);
    const reply = await rpc(gw.app, 'tools/call', {
      ...call,
      requestState: round.result.requestState,
      inputResponses: { user_name: { action: 'accept', content: { name: 'a\u0000b' } } },
    });
    expect(reply.status).toBe(400);
    expect(reply.error).toEqual({
      code: -32602,
      message: `Invalid params: params.inputResponses.user_name.content.name: ${NUL_PROBLEM}`,
      data: {
        issues: [{ path: 'params.inputResponses.user_name.content.name', message: NUL_PROBLEM }],
      },
    });
  });

  it('in arguments and in an object key is -32602', async () => {
    const inValue = await rpc(gw.app, 'tools/call', {
      name: 'test_tool_with_task',
      arguments: { name: '\u0000' },
    });
    expect(inValue.status).toBe(400);
    expect(inValue.error.message).toBe(`Invalid params: params.arguments.name: ${NUL_PROBLEM}`);
    const inKey = await rpc(gw.app, 'tools/call', {
      name: 'greet',
      arguments: { ['x\u0000']: 1 },
    });
    expect(inKey.status).toBe(400);
    expect(inKey.error.message).toBe(
      `Invalid params: params.arguments["x\\u0000"] (the key): ${NUL_PROBLEM}`,
    );
  });

  it('in a tasks/update answer is -32602 and changes nothing', async () => {
    const taskId = await taskAskingForATitle();
    const before = await getTask(infra.db, taskId);
    const reply = await rpc(gw.app, 'tasks/update', {
      taskId,
      inputResponses: { title: { action: 'accept', content: { title: 'x\u0000' } } },
    });
    expect(reply.status).toBe(400);
    expect(reply.error.code).toBe(-32602);
    expect(reply.error.message).toBe(
      `Invalid params: params.inputResponses.title.content.title: ${NUL_PROBLEM}`,
    );
    expect(await getTask(infra.db, taskId)).toEqual(before);
  });
});

/** Issue 24, item 6: jsonb refuses a lone UTF-16 surrogate too, so it is -32602 like NUL. */
const surrogateProblem = (code: string) =>
  `contains a lone UTF-16 surrogate (U+${code}), which cannot be stored`;

describe('a lone UTF-16 surrogate in params', () => {
  it('in arguments and in an object key is -32602 naming its path, and creates nothing', async () => {
    const before = await infra.db.selectFrom('tasks').select('id').execute();
    const inValue = await rpc(gw.app, 'tools/call', {
      name: 'generate_report',
      arguments: { size: 'small', title: 'a\uD800b' },
    });
    expect(inValue.status).toBe(400);
    expect(inValue.error).toEqual({
      code: -32602,
      message: `Invalid params: params.arguments.title: ${surrogateProblem('D800')}`,
      data: { issues: [{ path: 'params.arguments.title', message: surrogateProblem('D800') }] },
    });
    const inKey = await rpc(gw.app, 'tools/call', {
      name: 'greet',
      arguments: { ['x\uDFFF']: 1 },
    });
    expect(inKey.status).toBe(400);
    expect(inKey.error.message).toBe(
      `Invalid params: params.arguments["x\\udfff"] (the key): ${surrogateProblem('DFFF')}`,
    );
    expect(await infra.db.selectFrom('tasks').select('id').execute()).toEqual(before);
  });

  it('is not a paired surrogate: an emoji, escaped or not, is stored', async () => {
    const reply = await rpc(gw.app, 'tools/call', {
      name: 'test_tool_with_task',
      arguments: {},
    });
    const answered = await rpc(gw.app, 'tools/call', {
      name: 'test_tool_with_task',
      arguments: {},
      requestState: reply.result.requestState,
      inputResponses: { user_name: { action: 'accept', content: { name: 'Ann \uD83D\uDE00' } } },
    });
    expect(answered.status).toBe(200);
    expect(answered.result.resultType).toBe('task');
  });

  it('in an MRTR answer and in a tasks/update answer is -32602 and changes nothing', async () => {
    const call = { name: 'test_tool_with_task', arguments: {} };
    const round = await rpc(gw.app, 'tools/call', call);
    const mrtr = await rpc(gw.app, 'tools/call', {
      ...call,
      requestState: round.result.requestState,
      inputResponses: { user_name: { action: 'accept', content: { name: '\uDC00' } } },
    });
    expect(mrtr.status).toBe(400);
    expect(mrtr.error.message).toBe(
      `Invalid params: params.inputResponses.user_name.content.name: ${surrogateProblem('DC00')}`,
    );

    const taskId = await taskAskingForATitle();
    const before = await getTask(infra.db, taskId);
    const update = await rpc(gw.app, 'tasks/update', {
      taskId,
      inputResponses: { title: { action: 'accept', content: { title: 'x\uDBFF' } } },
    });
    expect(update.status).toBe(400);
    expect(update.error.message).toBe(
      `Invalid params: params.inputResponses.title.content.title: ${surrogateProblem('DBFF')}`,
    );
    expect(await getTask(infra.db, taskId)).toEqual(before);
  });
});
