import { MAX_PARAMS_DEPTH } from '@mcp-tasks/protocol';
import { describe, expect, it } from 'vitest';
import { keepAnything } from './fixtures/any-arguments-tool.js';
import { useGatewayUnderTest } from './support/harness.js';
import { rpc, rpcBody, rpcHeaders, readReply, type RpcReply } from './support/rpc.js';

/**
 * Issue 24, items 1 and 8: one bound on nesting, checked right after parsing, covers every
 * recursive walk of a request (validation, the unstorable-text scan, the MRTR digest, the create's
 * comparison), so a deep value is a -32602 naming the bound, never a stack overflow's 500.
 */
const { infra, gw } = useGatewayUnderTest('gw_depth', () => ({ tools: [keepAnything] }));

/** Stands for a deep value in a body until `post` writes it as text (JSON.stringify would overflow). */
const deep = (depth: number) => `<<deep:${depth}>>`;

/**
 * POSTs a request as the client builds it, with each deep(n) placeholder written as n nested
 * arrays: the text a hostile client sends, which JSON.stringify could not produce past ~4,500.
 */
async function post(
  method: string,
  params: Record<string, unknown>,
  options: { id?: number | string; envelope?: Record<string, unknown> } = {},
): Promise<RpcReply> {
  const body = { ...rpcBody(method, params, { id: options.id }), ...options.envelope };
  const text = JSON.stringify(body).replace(/"<<deep:(\d+)>>"/g, (_, n: string) => {
    const depth = Number(n);
    return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
  });
  return readReply(
    await gw.app.request('/mcp', {
      method: 'POST',
      headers: rpcHeaders(method, params),
      body: text,
    }),
  );
}

/** `[0]` repeated: the path into nested(). */
const into = (levels: number) => '[0]'.repeat(levels);

async function countTasks(toolName: string): Promise<number> {
  const rows = await infra.db
    .selectFrom('tasks')
    .select('id')
    .where('tool_name', '=', toolName)
    .execute();
  return rows.length;
}

function expectTooDeep(reply: RpcReply, path: string, id: number | string = 1) {
  const message = `nests deeper than ${MAX_PARAMS_DEPTH} levels of arrays and objects (params counts as level 1; the limit is ${MAX_PARAMS_DEPTH})`;
  expect(reply.status).toBe(400);
  expect(reply.body).toEqual({
    jsonrpc: '2.0',
    id,
    error: {
      code: -32602,
      message: `Invalid params: ${path}: ${message}`,
      data: { issues: [{ path, message }] },
    },
  });
}

describe('params nested deeper than MAX_PARAMS_DEPTH', () => {
  it('is the bound 64, and arguments exactly at it are created', async () => {
    expect(MAX_PARAMS_DEPTH).toBe(64);
    // params (1) → arguments (2) → 62 arrays in `deep` (3 to 64).
    const reply = await post('tools/call', {
      name: 'keep_anything',
      arguments: { deep: deep(62) },
    });
    expect(reply.status).toBe(200);
    expect(reply.result.resultType).toBe('task');
  });

  it('refuses arguments one level deeper with -32602 naming the bound, and commits nothing', async () => {
    const before = await countTasks('keep_anything');
    const reply = await post(
      'tools/call',
      { name: 'keep_anything', arguments: { deep: deep(63) } },
      { id: 7 },
    );
    expectTooDeep(reply, `params.arguments.deep${into(62)}`, 7);
    expect(await countTasks('keep_anything')).toBe(before);
  });

  it('refuses arguments 3,900 and 10,000 deep the same way (a stack overflow before)', async () => {
    const before = await countTasks('keep_anything');
    for (const depth of [3_900, 10_000]) {
      const reply = await post('tools/call', {
        name: 'keep_anything',
        arguments: { deep: deep(depth) },
      });
      expectTooDeep(reply, `params.arguments.deep${into(62)}`);
    }
    expect(await countTasks('keep_anything')).toBe(before);
  });

  it('refuses deep MRTR answers and tasks/update answers with -32602', async () => {
    const call = { name: 'test_tool_with_task', arguments: {} };
    const round = await rpc(gw.app, 'tools/call', call);
    const answer = { action: 'accept', content: { name: deep(10_000) } };
    expectTooDeep(
      await post('tools/call', {
        ...call,
        requestState: round.result.requestState,
        inputResponses: { user_name: answer },
      }),
      `params.inputResponses.user_name.content.name${into(60)}`,
    );
    expectTooDeep(
      await post('tasks/update', {
        taskId: 'tsk_AAAAAAAAAAAAAAAAAAAAAAAA',
        inputResponses: { title: answer },
      }),
      `params.inputResponses.title.content.name${into(60)}`,
    );
  });

  it('answers a deep value outside params with -32600 and keeps the request id', async () => {
    const reply = await post(
      'server/discover',
      {},
      { id: 'deep-1', envelope: { jsonrpc: deep(10_000) } },
    );
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      jsonrpc: '2.0',
      id: 'deep-1',
      error: {
        code: -32600,
        message: `Invalid Request: the message nests deeper than ${MAX_PARAMS_DEPTH + 1} levels of arrays and objects`,
      },
    });
  });
});
