import {
  claimLease,
  completeTask,
  createTaskService,
  failTask,
  getTask,
  requestInput,
  type TaskService,
} from '@mcp-tasks/store';
import { TOOL_PACKS, createToolCatalogue } from '@mcp-tasks/tools';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SERVER_INFO } from '../src/app.js';
import {
  buildGateway,
  startInfrastructure,
  type GatewayUnderTest,
  type Infrastructure,
} from './support/harness.js';
import {
  CAPS_NONE,
  SMALL_REPORT,
  TASKS_EXT,
  createReportTask,
  rpc,
  type RpcOptions,
} from './support/rpc.js';

let infra: Infrastructure;
let gw: GatewayUnderTest;
const serverInfoMeta = { 'io.modelcontextprotocol/serverInfo': SERVER_INFO };

beforeAll(async () => {
  infra = await startInfrastructure('gw_tasks');
  gw = buildGateway(infra);
});
afterAll(async () => {
  await infra?.close();
});

async function getTaskResult(taskId: string, options: RpcOptions = {}) {
  return rpc(gw.app, 'tasks/get', { taskId }, options);
}

const elicitation = (message: string) => ({
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message,
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
  },
});
const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });

describe('discovery and tools', () => {
  it('answers server/discover with versions, capabilities, cache hints and identity (R7)', async () => {
    const reply = await rpc(gw.app, 'server/discover', {}, { caps: CAPS_NONE });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        resultType: 'complete',
        supportedVersions: ['2026-07-28'],
        capabilities: { tools: {}, prompts: {}, resources: {}, extensions: { [TASKS_EXT]: {} } },
        ttlMs: 300_000,
        cacheScope: 'public',
        _meta: serverInfoMeta,
      },
    });
  });

  it('lists every tool in catalogue order with object input schemas and cache hints, byte-identical across instances (R8)', async () => {
    const first = await rpc(gw.app, 'tools/list', {});
    const second = await rpc(buildGateway(infra).app, 'tools/list', {}, { as: 'eve' });
    expect(first.text).toBe(second.text);
    const result = first.result;
    expect(result).toMatchObject({
      resultType: 'complete',
      ttlMs: 300_000,
      cacheScope: 'public',
      _meta: serverInfoMeta,
    });
    const names = (result.tools as { name: string }[]).map((tool) => tool.name);
    // The catalogue fixes the order (deterministic, not necessarily alphabetical).
    expect(names).toEqual(
      createToolCatalogue({ packs: [...TOOL_PACKS] })
        .list()
        .map((tool) => tool.name),
    );
    expect(names).toEqual(
      expect.arrayContaining([
        'confirm_delete',
        'failing_job',
        'generate_report',
        'greet',
        'multi_input',
        'protocol_error_job',
        'slow_compute',
        'test_tool_with_task',
      ]),
    );
    for (const tool of result.tools as { inputSchema: { type: string } }[])
      expect(tool.inputSchema.type).toBe('object');
  });

  it('answers prompts/list, resources/list and resources/templates/list with empty cacheable lists', async () => {
    for (const [method, field] of [
      ['prompts/list', 'prompts'],
      ['resources/list', 'resources'],
      ['resources/templates/list', 'resourceTemplates'],
    ] as const) {
      const reply = await rpc(gw.app, method, {});
      expect(reply.result).toEqual({
        resultType: 'complete',
        [field]: [],
        ttlMs: 300_000,
        cacheScope: 'public',
        _meta: serverInfoMeta,
      });
    }
  });

  it('answers a sync tool directly with resultType complete and serverInfo', async () => {
    const reply = await rpc(gw.app, 'tools/call', { name: 'greet', arguments: { name: 'Ada' } });
    expect(reply.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        resultType: 'complete',
        content: [{ type: 'text', text: 'Hello, Ada!' }],
        _meta: serverInfoMeta,
      },
    });
  });

  it('ignores a legacy params.task hint: a sync tool stays sync', async () => {
    const reply = await rpc(gw.app, 'tools/call', {
      name: 'greet',
      arguments: { name: 'Ada' },
      task: { ttl: 1000 },
    });
    expect(reply.result.resultType).toBe('complete');
  });

  it('serves a task-optional tool synchronously to a non-declaring client and as a task to a declaring one', async () => {
    const sync = await rpc(
      gw.app,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 1 } },
      { caps: CAPS_NONE },
    );
    expect(sync.result.resultType).toBe('complete');
    const task = await rpc(gw.app, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 2 },
    });
    expect(task.result.resultType).toBe('task');
  });
});

describe('creating a task (R10, R11)', () => {
  it('returns a flat CreateTaskResult that tasks/get resolves immediately, and enqueues a wake-up', async () => {
    const reply = await rpc(gw.app, 'tools/call', SMALL_REPORT);
    const result = reply.result;
    expect(Object.keys(result).sort()).toEqual([
      '_meta',
      'createdAt',
      'lastUpdatedAt',
      'pollIntervalMs',
      'resultType',
      'status',
      'statusMessage',
      'taskId',
      'ttlMs',
    ]);
    expect(result).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 3_600_000,
      pollIntervalMs: 1000,
      _meta: serverInfoMeta,
    });
    expect(result.taskId).toMatch(/^tsk_[A-Za-z0-9_-]{24}$/);
    expect(result.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
    const taskId = result.taskId as string;
    const get = await getTaskResult(taskId);
    expect(get.result).toEqual({ ...result, resultType: 'complete' });
    await expect(infra.queue.hasLiveJob(taskId)).resolves.toBe(true);
    const stored = await getTask(infra.db, taskId);
    expect(stored?.owner).toEqual({ tenant: 'acme', principal: 'alice' });
    expect(stored?.operation).toEqual({
      method: 'tools/call',
      toolName: 'generate_report',
      arguments: { size: 'small' },
    });
  });

  it('still returns a valid handle when the enqueue fails after the commit', async () => {
    const broken = buildGateway(infra, {
      dispatcher: { enqueue: () => Promise.reject(new Error('redis down')) },
    });
    const reply = await rpc(broken.app, 'tools/call', SMALL_REPORT);
    expect(reply.status).toBe(200);
    const taskId = reply.result.taskId as string;
    const get = await rpc(broken.app, 'tasks/get', { taskId });
    expect(get.result.status).toBe('working');
  });

  it('answers an unexpected failure with -32603 and 500, without its message', async () => {
    const failing = buildGateway(infra, {
      taskService: {
        createAndDispatch: () => Promise.reject(new Error('connection refused to 10.0.0.7')),
        submitInputResponses: () => Promise.reject(new Error('unused')),
        cancel: () => Promise.reject(new Error('unused')),
        redispatchOrphans: () => Promise.reject(new Error('unused')),
      },
    });
    const reply = await rpc(failing.app, 'tools/call', SMALL_REPORT, { id: 'boom' });
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual({
      jsonrpc: '2.0',
      id: 'boom',
      error: { code: -32603, message: 'Internal error' },
    });
  });

  it('counts created tasks in /metrics', async () => {
    const metrics = await (await gw.app.request('/metrics')).text();
    expect(metrics).toMatch(/mcp_tasks_created_total\{tool="generate_report"\} [1-9]/);
    expect(metrics).toMatch(
      /mcp_requests_total\{method="tools\/call",code="ok",status="200"\} [1-9]/,
    );
    expect(metrics).toContain('mcp_request_duration_seconds_bucket');
  });
});

describe('tenancy (R12, R15)', () => {
  it('answers a foreign task exactly like a missing one, on every task method', async () => {
    const taskId = await createReportTask(gw.app);
    const missing = await getTaskResult('tsk_doesnotexistdoesnotexist');
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
    const parked = await getTaskResult(taskId);
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
    expect(partial.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { resultType: 'complete', _meta: serverInfoMeta },
    });
    const still = await getTaskResult(taskId);
    expect(still.result.status).toBe('input_required');
    expect(Object.keys(still.result.inputRequests as object)).toEqual(['second']);

    await rpc(gw.app, 'tasks/update', {
      taskId,
      inputResponses: { second: accept({ ok: false }) },
    });
    const resumed = await getTaskResult(taskId);
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
    expect(reply.result).toEqual({ resultType: 'complete', _meta: serverInfoMeta });
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
    const reply = await getTaskResult(taskId);
    expect(reply.result).toMatchObject({
      resultType: 'complete',
      status: 'completed',
      result: {
        resultType: 'complete',
        content: [{ type: 'text', text: 'done' }],
        _meta: serverInfoMeta,
      },
      _meta: serverInfoMeta,
    });
    expect(reply.result.error).toBeUndefined();
  });

  it('shows a failed task with its JSON-RPC error and no result', async () => {
    const taskId = await createReportTask(gw.app);
    const claim = await claimLease(infra.db, taskId, 'test-worker', 30_000);
    if (claim === null) throw new Error('not claimable');
    await failTask(infra.db, claim.fence, { code: -32603, message: 'boom' }, 'It broke');
    const reply = await getTaskResult(taskId);
    expect(reply.result).toMatchObject({
      status: 'failed',
      statusMessage: 'It broke',
      error: { code: -32603, message: 'boom' },
    });
    expect(reply.result.result).toBeUndefined();
  });

  it('acknowledges a cancel, also again and on a terminal task', async () => {
    const taskId = await createReportTask(gw.app);
    const ack = {
      jsonrpc: '2.0',
      id: 1,
      result: { resultType: 'complete', _meta: serverInfoMeta },
    };
    expect((await rpc(gw.app, 'tasks/cancel', { taskId })).body).toEqual(ack);
    // Unleased and working: the store cancels it directly.
    expect((await getTaskResult(taskId)).result.status).toBe('cancelled');
    expect((await rpc(gw.app, 'tasks/cancel', { taskId })).body).toEqual(ack);
  });
});

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

describe('operations', () => {
  it('rate-limits tasks/get faster than pollIntervalMs when enabled', async () => {
    const limited = buildGateway(infra, {
      config: { pollRateLimit: true, taskPollIntervalMs: 60_000 },
    });
    const taskId = await createReportTask(limited.app);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1)
      statuses.push((await rpc(limited.app, 'tasks/get', { taskId })).status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses[5]).toBe(429);
    const limitedReply = await rpc(limited.app, 'tasks/get', { taskId });
    expect(limitedReply.error.code).toBe(-32600);
    expect(limitedReply.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('rate-limits tasks/get per principal before the read, across task ids', async () => {
    const limited = buildGateway(infra, {
      config: { pollRateLimit: true, taskPollIntervalMs: 60_000 },
    });
    const taskId = await createReportTask(limited.app);
    // Twenty polls of ids that do not exist spend the principal's burst without a task bucket.
    const missing: unknown[] = [];
    for (let i = 0; i < 20; i += 1) {
      const id = `tsk_${String(i).padStart(24, 'x')}`;
      missing.push((await rpc(limited.app, 'tasks/get', { taskId: id })).error.code);
    }
    expect(missing).toEqual(Array.from({ length: 20 }, () => -32602));
    const throttled = await rpc(limited.app, 'tasks/get', { taskId });
    expect(throttled.status).toBe(429);
    expect(throttled.error.code).toBe(-32600);
    expect(throttled.headers.get('retry-after')).toMatch(/^[1-6]$/);
    const other = await rpc(limited.app, 'tasks/get', { taskId }, { as: 'bob' });
    expect(other.status).toBe(400);
  });

  it('answers a request that outlives MCP_REQUEST_TIMEOUT_MS with 504 and -32603', async () => {
    const impatient = buildGateway(infra, { config: { requestTimeoutMs: 100 } });
    const reply = await rpc(
      impatient.app,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 1 } },
      { caps: CAPS_NONE },
    );
    expect(reply.status).toBe(504);
    expect(reply.error.code).toBe(-32603);
  });

  it('returns the task handle when creation outlasts MCP_REQUEST_TIMEOUT_MS (no orphan task)', async () => {
    const real = createTaskService({ db: infra.db, dispatcher: infra.queue });
    const slowService: TaskService = {
      ...real,
      async createAndDispatch(input) {
        // A replica wait longer than the request timeout.
        await new Promise((resolve) => setTimeout(resolve, 300));
        return real.createAndDispatch(input);
      },
    };
    const impatient = buildGateway(infra, {
      config: { requestTimeoutMs: 100 },
      taskService: slowService,
    });
    const reply = await rpc(impatient.app, 'tools/call', SMALL_REPORT);
    expect(reply.status).toBe(200);
    expect(reply.result.resultType).toBe('task');
    const fetched = await rpc(impatient.app, 'tasks/get', { taskId: reply.result.taskId });
    expect(fetched.status).toBe(200);
    expect(fetched.result.taskId).toBe(reply.result.taskId);
    expect(fetched.result.status).toBe('working');
  });

  it('aborts the synchronous work of a request that timed out', async () => {
    const impatient = buildGateway(infra, { config: { requestTimeoutMs: 100 } });
    // The catalogue hands out the pack's own definition, so the gateway calls this spy.
    const slowCompute = createToolCatalogue({ packs: ['conformance'] }).get('slow_compute')!;
    const original = slowCompute.runSync!;
    let running: Promise<unknown> | undefined;
    const spy = vi.spyOn(slowCompute, 'runSync').mockImplementation((args, call) => {
      running = original(args, call);
      return running as ReturnType<typeof original>;
    });
    try {
      const reply = await rpc(
        impatient.app,
        'tools/call',
        { name: 'slow_compute', arguments: { seconds: 30 } },
        { caps: CAPS_NONE },
      );
      expect(reply.status).toBe(504);
      expect(spy).toHaveBeenCalledTimes(1);
      await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      spy.mockRestore();
    }
  });

  it('refuses a synchronous slow_compute longer than 60 s with -32602', async () => {
    const reply = await rpc(
      gw.app,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 61 } },
      { caps: CAPS_NONE },
    );
    expect(reply.status).toBe(400);
    expect(reply.error).toEqual({
      code: -32602,
      message:
        'slow_compute runs at most 60 s without a task; declare the tasks extension for longer',
    });
  });

  it('answers a failed readiness check as "fail", without the driver error text', async () => {
    const local = buildGateway(infra, {
      queue: { ping: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.7:6379')) },
    });
    const ready = await local.app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: 'not_ready',
      checks: { postgres: 'ok', redis: 'fail' },
    });
  });

  it('reports liveness, readiness of Postgres and Redis, and drains on shutdown', async () => {
    const local = buildGateway(infra);
    expect((await local.app.request('/healthz')).status).toBe(200);
    const ready = await local.app.request('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { postgres: 'ok', redis: 'ok' },
    });
    local.shutdown.abort();
    expect((await local.app.request('/readyz')).status).toBe(503);
    const refused = await rpc(local.app, 'server/discover', {});
    expect(refused.status).toBe(503);
    expect(refused.error.code).toBe(-32603);
  });
});
