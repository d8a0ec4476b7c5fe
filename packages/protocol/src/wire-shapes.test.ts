import { describe, expect, it } from 'vitest';
import { ProtocolError } from './errors.js';
import { JsonRpcResponseSchema, parseJsonRpcMessage } from './jsonrpc.js';
import { parseParams } from './params.js';
import { buildDiscoverResult, DiscoverResultSchema } from './discover.js';
import { buildEmptyResult, EmptyResultSchema, withServerInfo } from './results.js';
import {
  buildCallToolResult,
  buildListToolsResult,
  CallToolParamsSchema,
  CallToolResultSchema,
  ListToolsResultSchema,
} from './tools.js';
import {
  buildCreateTaskResult,
  buildGetTaskResult,
  buildTaskStatusNotification,
  CreateTaskResultSchema,
  GetTaskParamsSchema,
  GetTaskResultSchema,
  TaskStatusNotificationSchema,
  UpdateTaskParamsSchema,
  type TaskSnapshotInput,
} from './tasks.js';
import {
  buildElicitationRequest,
  buildInputRequiredResult,
  ElicitFormRequestSchema,
  InputRequiredResultSchema,
} from './mrtr.js';
import {
  buildSubscriptionEnd,
  buildSubscriptionsAcknowledged,
  ListenParamsSchema,
  listenRequiresTasksExtension,
  SubscriptionsAcknowledgedNotificationSchema,
} from './subscriptions.js';
import * as fx from '../test/wire-fixtures.js';

const SI = 'io.modelcontextprotocol/serverInfo';
const SUB = 'io.modelcontextprotocol/subscriptionId';

function paramsError(run: () => unknown): ProtocolError {
  try {
    run();
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error('expected a ProtocolError');
}

describe('seed wire examples', () => {
  it('parses every request and its params', () => {
    for (const req of [
      fx.toolsCallRequest,
      fx.tasksGetRequest,
      fx.tasksUpdateRequest,
      fx.tasksCancelRequest,
    ]) {
      expect(parseJsonRpcMessage(req).kind).toBe('request');
    }
    expect(parseParams(CallToolParamsSchema, fx.toolsCallRequest.params)).toMatchObject({
      name: 'generate_report',
      arguments: { size: 'large' },
    });
    expect(parseParams(GetTaskParamsSchema, fx.tasksGetRequest.params).taskId).toBe(
      'tsk_786512e29e0d',
    );
    expect(
      parseParams(UpdateTaskParamsSchema, fx.tasksUpdateRequest.params).inputResponses,
    ).toEqual({
      approve_outline: { action: 'accept', content: { approved: true } },
    });
  });

  it('parses the CreateTaskResult response', () => {
    expect(JsonRpcResponseSchema.safeParse(fx.createTaskResponse).success).toBe(true);
    expect(CreateTaskResultSchema.safeParse(fx.createTaskResponse.result).success).toBe(true);
  });

  it('parses the completed and input_required tasks/get snapshots', () => {
    expect(GetTaskResultSchema.safeParse(fx.completedSnapshot).success).toBe(true);
    expect(GetTaskResultSchema.safeParse(fx.inputRequiredSnapshot).success).toBe(true);
  });

  it('parses the DISC example discover result (R7)', () => {
    expect(DiscoverResultSchema.safeParse(fx.discoverResult).success).toBe(true);
  });

  it('accepts unknown extra fields on results and keeps them', () => {
    const extra = { ...fx.createTaskResponse.result, futureField: { x: 1 } };
    expect(CreateTaskResultSchema.parse(extra)).toMatchObject({ futureField: { x: 1 } });
    expect(GetTaskResultSchema.parse({ ...fx.completedSnapshot, vendor: 'x' })).toMatchObject({
      vendor: 'x',
    });
    expect(DiscoverResultSchema.parse({ ...fx.discoverResult, extra: true })).toMatchObject({
      extra: true,
    });
    expect(EmptyResultSchema.safeParse({ resultType: 'complete', other: 1 }).success).toBe(true);
  });
});

describe('invalid variants', () => {
  it.each([
    ['a task wrapper', { ...fx.createTaskResponse.result, task: {} }],
    ['a requestState', { ...fx.createTaskResponse.result, requestState: 's' }],
    ['legacy ttl', { ...fx.createTaskResponse.result, ttl: 1000 }],
    ['legacy pollInterval', { ...fx.createTaskResponse.result, pollInterval: 1000 }],
    ['a zero pollIntervalMs', { ...fx.createTaskResponse.result, pollIntervalMs: 0 }],
    ['a fractional ttlMs', { ...fx.createTaskResponse.result, ttlMs: 1.5 }],
    ['a missing ttlMs key', (({ ttlMs: _t, ...rest }) => rest)(fx.createTaskResponse.result)],
    ['a non-ISO createdAt', { ...fx.createTaskResponse.result, createdAt: 'yesterday' }],
    ['resultType complete', { ...fx.createTaskResponse.result, resultType: 'complete' }],
  ])('rejects a CreateTaskResult with %s', (_label, value) => {
    expect(CreateTaskResultSchema.safeParse(value).success).toBe(false);
  });

  it.each([
    ['resultType task', { ...fx.completedSnapshot, resultType: 'task' }],
    ['a nested result without resultType', { ...fx.completedSnapshot, result: { content: [] } }],
    ['a completed task without result', (({ result: _r, ...rest }) => rest)(fx.completedSnapshot)],
    ['inputRequests on a working task', { ...fx.inputRequiredSnapshot, status: 'working' }],
    ['a result on a working task', { ...fx.completedSnapshot, status: 'working' }],
    [
      'a failed task without error',
      { ...fx.completedSnapshot, status: 'failed', result: undefined },
    ],
    [
      'related-task meta in the inlined result',
      {
        ...fx.completedSnapshot,
        result: {
          ...fx.completedSnapshot.result,
          _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } },
        },
      },
    ],
    ['an unknown status', { ...fx.completedSnapshot, status: 'done' }],
  ])('rejects a tasks/get result with %s', (_label, value) => {
    expect(GetTaskResultSchema.safeParse(value).success).toBe(false);
  });

  it('rejects an ack that carries task fields', () => {
    expect(EmptyResultSchema.safeParse({ resultType: 'complete', taskId: 't' }).success).toBe(
      false,
    );
  });

  it('rejects a capabilities.tasks v1 shape in discover', () => {
    expect(
      DiscoverResultSchema.safeParse({
        ...fx.discoverResult,
        capabilities: { tools: {}, tasks: { list: {} } },
      }).success,
    ).toBe(false);
  });

  it('turns bad params into -32602 naming each offending path', () => {
    const error = paramsError(() =>
      parseParams(UpdateTaskParamsSchema, {
        taskId: 7,
        inputResponses: { k: { action: 'maybe' } },
      }),
    );
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/params\.taskId: taskId must be a string/);
    expect(error.message).toMatch(/params\.inputResponses\.k/);
    const data = error.data as { issues: { path: string }[] };
    expect(data.issues.map((i) => i.path)).toContain('params.taskId');
  });

  it('requires a tool name and an object arguments on tools/call', () => {
    expect(paramsError(() => parseParams(CallToolParamsSchema, { arguments: {} })).message).toMatch(
      /params\.name/,
    );
    expect(
      paramsError(() => parseParams(CallToolParamsSchema, { name: 'x', arguments: [1] })).message,
    ).toMatch(/params\.arguments/);
    expect(paramsError(() => parseParams(GetTaskParamsSchema, undefined)).message).toMatch(
      /params\.taskId/,
    );
  });

  it('ignores a legacy task param on tools/call', () => {
    expect(parseParams(CallToolParamsSchema, { name: 'greet', task: { ttl: 1 } }).name).toBe(
      'greet',
    );
  });
});

const serverInfo = fx.serverInfo;
const base: TaskSnapshotInput = {
  taskId: 'tsk_1',
  status: 'working',
  createdAt: '2026-08-21T10:30:00.000Z',
  lastUpdatedAt: '2026-08-21T10:30:00.000Z',
  ttlMs: 900000,
  pollIntervalMs: 1000,
};

describe('result builders (R6, R7, R10, R14, R17, R21)', () => {
  it('adds serverInfo without dropping other _meta', () => {
    expect(withServerInfo({ resultType: 'complete', _meta: { a: 1 } }, serverInfo)).toStrictEqual({
      resultType: 'complete',
      _meta: { a: 1, [SI]: serverInfo },
    });
  });

  it('builds a discover result with the extension and cache hints', () => {
    const result = buildDiscoverResult({ serverInfo, ttlMs: 3600000, cacheScope: 'public' });
    expect(result).toStrictEqual({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } },
      ttlMs: 3600000,
      cacheScope: 'public',
      _meta: { [SI]: serverInfo },
    });
    expect(DiscoverResultSchema.safeParse(result).success).toBe(true);
  });

  it('builds tools/list and sync tools/call results', () => {
    const list = buildListToolsResult(
      [{ name: 'greet', inputSchema: { type: 'object' } }],
      { ttlMs: 60000, cacheScope: 'public' },
      serverInfo,
    );
    expect(ListToolsResultSchema.safeParse(list).success).toBe(true);
    expect(list._meta).toStrictEqual({ [SI]: serverInfo });
    const call = buildCallToolResult(
      { content: [{ type: 'text', text: 'Hello, A!' }], isError: true },
      serverInfo,
    );
    expect(call).toStrictEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Hello, A!' }],
      isError: true,
      _meta: { [SI]: serverInfo },
    });
    expect(CallToolResultSchema.safeParse(call).success).toBe(true);
  });

  it('builds a flat CreateTaskResult', () => {
    expect(buildCreateTaskResult(base, serverInfo)).toStrictEqual({
      resultType: 'task',
      taskId: 'tsk_1',
      status: 'working',
      createdAt: '2026-08-21T10:30:00.000Z',
      lastUpdatedAt: '2026-08-21T10:30:00.000Z',
      ttlMs: 900000,
      pollIntervalMs: 1000,
      _meta: { [SI]: serverInfo },
    });
  });

  it('inlines a completed result with its own resultType and serverInfo, without related-task', () => {
    const result = buildGetTaskResult(
      {
        ...base,
        status: 'completed',
        result: {
          content: [{ type: 'text', text: 'ok' }],
          _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'tsk_1' } },
        },
      },
      serverInfo,
    );
    expect(result.result).toStrictEqual({
      content: [{ type: 'text', text: 'ok' }],
      resultType: 'complete',
      _meta: { [SI]: serverInfo },
    });
    expect(result.resultType).toBe('complete');
    expect(GetTaskResultSchema.safeParse(result).success).toBe(true);
  });

  it('serializes a completed tasks/get result with its keys in wire order', () => {
    const result = buildGetTaskResult(
      {
        ...base,
        status: 'completed',
        statusMessage: 'done',
        result: {
          content: [],
          _meta: {
            trace: 't1',
            [SI]: { name: 'tool', version: '0' },
            'io.modelcontextprotocol/related-task': { taskId: 'tsk_1' },
            after: 2,
          },
        },
      },
      { name: 'gw', version: '1' },
    );
    expect(JSON.stringify(result)).toBe(
      '{"taskId":"tsk_1","status":"completed","createdAt":"2026-08-21T10:30:00.000Z",' +
        '"lastUpdatedAt":"2026-08-21T10:30:00.000Z","ttlMs":900000,"statusMessage":"done",' +
        '"pollIntervalMs":1000,"result":{"content":[],"_meta":' +
        `{"trace":"t1","${SI}":{"name":"gw","version":"1"},"after":2},"resultType":"complete"},` +
        '"resultType":"complete",' +
        `"_meta":{"${SI}":{"name":"gw","version":"1"}}}`,
    );
  });

  it('shows only the field each status allows', () => {
    const failed = buildGetTaskResult(
      {
        ...base,
        status: 'failed',
        error: { code: -32603, message: 'boom' },
        result: { content: [] },
      },
      serverInfo,
    );
    expect(failed.error).toStrictEqual({ code: -32603, message: 'boom' });
    expect('result' in failed).toBe(false);
    const cancelled = buildGetTaskResult(
      { ...base, status: 'cancelled', inputRequests: { k: {} } },
      serverInfo,
    );
    expect(Object.keys(cancelled).sort()).toEqual([
      '_meta',
      'createdAt',
      'lastUpdatedAt',
      'pollIntervalMs',
      'resultType',
      'status',
      'taskId',
      'ttlMs',
    ]);
    const waiting = buildGetTaskResult(
      { ...base, status: 'input_required', inputRequests: fx.inputRequiredSnapshot.inputRequests },
      serverInfo,
    );
    expect(GetTaskResultSchema.safeParse(waiting).success).toBe(true);
  });

  it('builds the empty ack', () => {
    expect(buildEmptyResult(serverInfo)).toStrictEqual({
      resultType: 'complete',
      _meta: { [SI]: serverInfo },
    });
  });

  it('builds MRTR results and form elicitations', () => {
    const elicit = buildElicitationRequest('Your name?', {
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
    });
    expect(ElicitFormRequestSchema.safeParse(elicit).success).toBe(true);
    const round = buildInputRequiredResult(
      { inputRequests: { user_name: elicit }, requestState: 'sig' },
      serverInfo,
    );
    expect(round).toStrictEqual({
      resultType: 'input_required',
      inputRequests: { user_name: elicit },
      requestState: 'sig',
      _meta: { [SI]: serverInfo },
    });
    expect(InputRequiredResultSchema.safeParse(round).success).toBe(true);
    expect(InputRequiredResultSchema.safeParse({ resultType: 'input_required' }).success).toBe(
      false,
    );
  });

  it('tags listen-stream messages with the subscription id', () => {
    const listen = parseParams(ListenParamsSchema, {
      notifications: { taskIds: ['tsk_1'] },
      _meta: fx.taskMeta,
    });
    expect(listenRequiresTasksExtension(listen)).toBe(true);
    expect(
      listenRequiresTasksExtension(
        parseParams(ListenParamsSchema, { notifications: { toolsListChanged: true } }),
      ),
    ).toBe(false);
    const ack = buildSubscriptionsAcknowledged(9, { taskIds: ['tsk_1'] });
    expect(ack).toStrictEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: ['tsk_1'] }, _meta: { [SUB]: 9 } },
    });
    expect(SubscriptionsAcknowledgedNotificationSchema.safeParse(ack).success).toBe(true);
    const note = buildTaskStatusNotification(9, base, serverInfo);
    expect(note.params._meta).toStrictEqual({ [SUB]: 9 });
    expect('resultType' in note.params).toBe(false);
    expect(TaskStatusNotificationSchema.safeParse(note).success).toBe(true);
    expect(buildSubscriptionEnd(9, serverInfo)).toStrictEqual({
      resultType: 'complete',
      _meta: { [SUB]: 9, [SI]: serverInfo },
    });
  });
});
