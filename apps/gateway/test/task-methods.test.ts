import {
  claimLease,
  completeTask,
  failTask,
  getTask,
  requestCancel,
  requestInput,
} from '@mcp-tasks/store';
import { describe, expect, it } from 'vitest';
import { useGatewayUnderTest } from './support/harness.js';
import {
  EMPTY_RESULT_REPLY,
  SERVER_INFO_META,
  accept,
  createReportTask,
  elicitation,
  getTaskResult,
  rpc,
} from './support/rpc.js';

// tasks/get, tasks/update and tasks/cancel on tasks the store drives: tenancy (R12, R15), the
// per-status snapshot (R14), partial and stray answers (R17) and idempotent cancel (R18).

const { infra, gw } = useGatewayUnderTest('gw_task_methods');

describe('tenancy (R12, R15)', () => {
  it('answers a foreign task exactly like a missing one, on every task method', async () => {
    const taskId = await createReportTask(gw.app);
    const missing = await getTaskResult(gw.app, 'tsk_doesnotexistdoesnotexist');
    for (const as of ['eve', 'bob'] as const) {
      for (const [method, params] of [
        ['tasks/get', { taskId }],
        ['tasks/update', { taskId, inputResponses: {} }],
        ['tasks/cancel', { taskId }],
      ] as const) {
        const reply = await rpc(gw.app, method, params, { as });
        expect(reply.status).toBe(missing.status);
        expect(reply.error).toEqual(missing.error);
      }
    }
    const stored = await getTask(infra.db, taskId);
    expect(stored?.cancelRequestedAt).toBeNull();
  });
});

describe('observing, answering and cancelling (R14, R17, R18)', () => {
  it('shows input_required with every outstanding request, keeps it on a partial answer and resumes on the last', async () => {
    const taskId = await createReportTask(gw.app);
    const claim = await claimLease(infra.db, taskId, 'test-worker', 30_000);
    if (claim === null) throw new Error('not claimable');
    await requestInput(
      infra.db,
      claim.fence,
      { first: elicitation('one?'), second: elicitation('two?') },
      { step: 1 },
      'Need answers',
    );
    const parked = await getTaskResult(gw.app, taskId);
    expect(parked.result).toMatchObject({
      resultType: 'complete',
      status: 'input_required',
      statusMessage: 'Need answers',
      inputRequests: { first: elicitation('one?'), second: elicitation('two?') },
    });
    expect(parked.result.result).toBeUndefined();

    const partial = await rpc(gw.app, 'tasks/update', {
      taskId,
      inputResponses: { first: accept({ ok: true }), never_issued: accept({}) },
    });
    expect(partial.body).toEqual(EMPTY_RESULT_REPLY);
    const still = await getTaskResult(gw.app, taskId);
    expect(still.result.status).toBe('input_required');
    expect(Object.keys(still.result.inputRequests as object)).toEqual(['second']);

    await rpc(gw.app, 'tasks/update', {
      taskId,
      inputResponses: { second: accept({ ok: false }) },
    });
    const resumed = await getTaskResult(gw.app, taskId);
    expect(resumed.result.status).toBe('working');
    expect(resumed.result.inputRequests).toBeUndefined();
  });

  it('acknowledges an update whose keys are not outstanding, whatever their shape', async () => {
    const taskId = await createReportTask(gw.app);
    const reply = await rpc(gw.app, 'tasks/update', {
      taskId,
      inputResponses: { 'unknown-key': { ignored: true } },
    });
    expect(reply.status).toBe(200);
    expect(reply.result).toEqual({ resultType: 'complete', _meta: SERVER_INFO_META });
    const invalid = await rpc(gw.app, 'tasks/update', {
      taskId,
      inputResponses: { k: 'not-an-object' },
    });
    expect(invalid.error.code).toBe(-32602);
  });

  it('inlines a completed result with its own resultType and serverInfo', async () => {
    const taskId = await createReportTask(gw.app);
    const claim = await claimLease(infra.db, taskId, 'test-worker', 30_000);
    if (claim === null) throw new Error('not claimable');
    await completeTask(infra.db, claim.fence, { content: [{ type: 'text', text: 'done' }] });
    const reply = await getTaskResult(gw.app, taskId);
    expect(reply.result).toMatchObject({
      resultType: 'complete',
      status: 'completed',
      result: {
        resultType: 'complete',
        content: [{ type: 'text', text: 'done' }],
        _meta: SERVER_INFO_META,
      },
      _meta: SERVER_INFO_META,
    });
    expect(reply.result.error).toBeUndefined();
  });

  it('shows a failed task with its JSON-RPC error and no result', async () => {
    const taskId = await createReportTask(gw.app);
    const claim = await claimLease(infra.db, taskId, 'test-worker', 30_000);
    if (claim === null) throw new Error('not claimable');
    await failTask(infra.db, claim.fence, { code: -32603, message: 'boom' }, 'It broke');
    const reply = await getTaskResult(gw.app, taskId);
    expect(reply.result).toMatchObject({
      status: 'failed',
      statusMessage: 'It broke',
      error: { code: -32603, message: 'boom' },
    });
    expect(reply.result.result).toBeUndefined();
  });

  it('acknowledges a cancel, also again and on a terminal task', async () => {
    const taskId = await createReportTask(gw.app);
    const ack = EMPTY_RESULT_REPLY;
    expect((await rpc(gw.app, 'tasks/cancel', { taskId })).body).toEqual(ack);
    // Unleased and working: the store cancels it directly.
    expect((await getTaskResult(gw.app, taskId)).result.status).toBe('cancelled');
    expect((await rpc(gw.app, 'tasks/cancel', { taskId })).body).toEqual(ack);
  });
});

describe('concurrent answers (they share statements in the store)', () => {
  /** One update per case, each on a task made for it: who asks, and with what answers. */
  const cases = [
    { keys: ['a'], answers: { a: accept({ ok: true }) } },
    { keys: ['a', 'b'], answers: { a: accept({ ok: true }), zzz: accept({}) } },
    { keys: ['a'], answers: { a: accept({ ok: 'yes' }) } },
    { keys: ['a'], answers: { a: { action: 'maybe' } } },
    { keys: ['a'], answers: { a: accept({ ok: true }) }, as: 'eve' as const },
    { keys: ['a'], answers: { a: accept({ ok: true }) }, cancelled: true },
    { keys: [], answers: { a: accept({ ok: true }) } },
  ];

  async function makeTasks(): Promise<string[]> {
    return await Promise.all(
      cases.map(async ({ keys, cancelled }) => {
        const taskId = await createReportTask(gw.app);
        if (keys.length === 0) return taskId;
        const claim = await claimLease(infra.db, taskId, 'test-worker', 30_000);
        if (claim === null) throw new Error('not claimable');
        const requests = Object.fromEntries(keys.map((key) => [key, elicitation(`${key}?`)]));
        await requestInput(infra.db, claim.fence, requests, { step: 1 }, 'Need answers');
        if (cancelled === true)
          await requestCancel(infra.db, { tenant: 'acme', principal: 'alice' }, taskId);
        return taskId;
      }),
    );
  }
  const update = (taskId: string, index: number) =>
    rpc(
      gw.app,
      'tasks/update',
      { taskId, inputResponses: cases[index]!.answers },
      { as: cases[index]!.as },
    );
  const stored = async (taskId: string) => {
    const task = await getTask(infra.db, taskId);
    return [task?.status, task?.inputRequests, task?.inputResponses];
  };

  it('answers each update as it would alone: same status, body and stored answers', async () => {
    const alone = await makeTasks();
    const together = await makeTasks();
    const aloneReplies = [];
    for (const [index, taskId] of alone.entries()) aloneReplies.push(await update(taskId, index));
    const togetherReplies = await Promise.all(together.map(update));
    const wire = (reply: { status: number; text: string }) => [reply.status, reply.text];
    expect(togetherReplies.map(wire)).toEqual(aloneReplies.map(wire));
    const outcome = (reply: { body: unknown }) => {
      const { error } = reply.body as { error?: { code: number } };
      return error === undefined ? 'ack' : error.code;
    };
    expect(aloneReplies.map(outcome)).toEqual(['ack', 'ack', -32602, -32602, -32602, 'ack', 'ack']);
    // The foreign task's error is the unknown id's.
    const missing = await getTaskResult(gw.app, 'tsk_doesnotexistdoesnotexist');
    expect(wire(aloneReplies[4]!)).toEqual(wire(missing));
    for (const [index, taskId] of alone.entries()) {
      expect(await stored(together[index]!)).toEqual(await stored(taskId));
    }
    expect(await stored(together[0]!)).toEqual(['working', {}, { a: accept({ ok: true }) }]);
  });
});
