import { describe, expect, it } from 'vitest';
import { parseJsonRpcMessage } from './jsonrpc.js';
import { buildRequestMeta, validateRequestMeta } from './meta.js';
import {
  buildRoutingHeaders,
  checkRoutingHeaders,
  decodeHeaderValue,
  encodeHeaderValue,
} from './routing-headers.js';
import type { ProtocolError } from './errors.js';
import type { Check } from './check.js';
import { tasksGetRequest, toolsCallRequest, taskMeta } from '../test/wire-fixtures.js';

const V = 'io.modelcontextprotocol/protocolVersion';

function b64(text: string): string {
  return `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

function check(headers: Record<string, string>, body: unknown): Check {
  return checkRoutingHeaders(new Headers(headers), parseJsonRpcMessage(body));
}

function mismatchOf(result: Check): ProtocolError {
  if (result.ok) throw new Error('expected a header mismatch');
  return result.error;
}

const callHeaders = {
  'MCP-Protocol-Version': '2026-07-28',
  'Mcp-Method': 'tools/call',
  'Mcp-Name': 'generate_report',
};
const getHeaders = {
  'MCP-Protocol-Version': '2026-07-28',
  'Mcp-Method': 'tasks/get',
  'Mcp-Name': 'tsk_786512e29e0d',
};

describe('routing headers (R23)', () => {
  it('accepts matching headers on tools/call and tasks/get', () => {
    expect(check(callHeaders, toolsCallRequest)).toEqual({ ok: true });
    expect(check(getHeaders, tasksGetRequest)).toEqual({ ok: true });
  });

  it('matches header names case-insensitively and trims surrounding whitespace', () => {
    expect(
      check(
        {
          'mcp-protocol-version': '2026-07-28',
          'MCP-METHOD': 'tools/call',
          'mcp-name': '  generate_report  ',
        },
        toolsCallRequest,
      ),
    ).toEqual({ ok: true });
  });

  it('decodes =?base64?…?= values before comparing', () => {
    expect(check({ ...getHeaders, 'Mcp-Name': b64('tsk_786512e29e0d') }, tasksGetRequest)).toEqual({
      ok: true,
    });
    const body = {
      ...toolsCallRequest,
      params: { ...toolsCallRequest.params, name: 'résumé 工具' },
    };
    expect(check({ ...callHeaders, 'Mcp-Name': b64('résumé 工具') }, body)).toEqual({ ok: true });
    expect(decodeHeaderValue('=?base64?!!!?=')).toBeUndefined();
    expect(
      mismatchOf(check({ ...getHeaders, 'Mcp-Name': '=?base64?abc?=' }, tasksGetRequest)).code,
    ).toBe(-32020);
  });

  it.each([
    [
      'a missing MCP-Protocol-Version',
      { 'Mcp-Method': 'tasks/get', 'Mcp-Name': 'tsk_786512e29e0d' },
      /Missing MCP-Protocol-Version/,
    ],
    [
      'a missing Mcp-Method',
      { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Name': 'tsk_786512e29e0d' },
      /Missing Mcp-Method/,
    ],
    [
      'a different Mcp-Method',
      { ...getHeaders, 'Mcp-Method': 'tools/call' },
      /Mcp-Method header "tools\/call" does not match the body method "tasks\/get"/,
    ],
    [
      'an upper-cased Mcp-Method value',
      { ...getHeaders, 'Mcp-Method': 'TASKS/GET' },
      /does not match the body method/,
    ],
    [
      'a missing Mcp-Name',
      { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tasks/get' },
      /Missing Mcp-Name header: for tasks\/get it must equal params\.taskId/,
    ],
    [
      'a different Mcp-Name',
      { ...getHeaders, 'Mcp-Name': 'tsk_other' },
      /Mcp-Name header "tsk_other" does not match params\.taskId "tsk_786512e29e0d"/,
    ],
  ])('answers -32020 for %s on tasks/get', (_label, headers, message) => {
    const error = mismatchOf(check(headers, tasksGetRequest));
    expect(error.code).toBe(-32020);
    expect(error.message).toMatch(message);
    expect(error.data).toBeUndefined();
  });

  it('answers -32020 for a tools/call body sent as Mcp-Method tasks/get (CONF tasks-headers-reject-mismatched-method)', () => {
    expect(
      mismatchOf(check({ ...callHeaders, 'Mcp-Method': 'tasks/get' }, toolsCallRequest)).code,
    ).toBe(-32020);
  });

  it('answers -32020 for a tools/call whose Mcp-Name is not params.name', () => {
    expect(
      mismatchOf(check({ ...callHeaders, 'Mcp-Name': 'wrong_tool_name' }, toolsCallRequest)).code,
    ).toBe(-32020);
    const { 'Mcp-Name': _dropped, ...withoutName } = callHeaders;
    expect(mismatchOf(check(withoutName, toolsCallRequest)).code).toBe(-32020);
  });

  it('checks Mcp-Name against params.uri for resources/read and params.name for prompts/get', () => {
    const read = {
      jsonrpc: '2.0',
      id: 1,
      method: 'resources/read',
      params: { uri: 'file:///a', _meta: taskMeta },
    };
    const base = { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'resources/read' };
    expect(check({ ...base, 'Mcp-Name': 'file:///a' }, read)).toEqual({ ok: true });
    expect(mismatchOf(check({ ...base, 'Mcp-Name': 'file:///b' }, read)).code).toBe(-32020);
    const prompt = {
      jsonrpc: '2.0',
      id: 1,
      method: 'prompts/get',
      params: { name: 'p', _meta: taskMeta },
    };
    expect(
      mismatchOf(
        check({ 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'prompts/get' }, prompt),
      ).code,
    ).toBe(-32020);
  });

  it('needs no Mcp-Name for server/discover, tools/list or subscriptions/listen', () => {
    for (const method of ['server/discover', 'tools/list', 'subscriptions/listen']) {
      const body = { jsonrpc: '2.0', id: 1, method, params: { _meta: taskMeta } };
      expect(check({ 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method }, body)).toEqual({
        ok: true,
      });
      expect(mismatchOf(check({ 'MCP-Protocol-Version': '2026-07-28' }, body)).code).toBe(-32020);
    }
  });

  it('answers header 2026-07-28 with body v999.0.0 as -32020, before the version rule', () => {
    const body = {
      ...tasksGetRequest,
      params: { ...tasksGetRequest.params, _meta: { ...taskMeta, [V]: 'v999.0.0' } },
    };
    const error = mismatchOf(check(getHeaders, body));
    expect(error.code).toBe(-32020);
    expect(error.message).toMatch(
      /MCP-Protocol-Version header "2026-07-28" does not match .* "v999\.0\.0"/,
    );
  });

  it('lets header and body agreeing on v999.0.0 through, so R3 answers -32022', () => {
    const body = {
      ...tasksGetRequest,
      params: { ...tasksGetRequest.params, _meta: { ...taskMeta, [V]: 'v999.0.0' } },
    };
    expect(check({ ...getHeaders, 'MCP-Protocol-Version': 'v999.0.0' }, body)).toEqual({
      ok: true,
    });
    const meta = validateRequestMeta(body.params);
    expect(meta.ok).toBe(false);
    if (!meta.ok) {
      expect(meta.error.code).toBe(-32022);
      expect(meta.error.data).toStrictEqual({ supported: ['2026-07-28'], requested: 'v999.0.0' });
    }
  });

  it('leaves a missing body version to R2 (-32602) instead of calling it a header mismatch', () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    expect(
      check({ 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/list' }, body),
    ).toEqual({ ok: true });
    const meta = validateRequestMeta(body.params);
    expect(meta.ok ? 0 : meta.error.code).toBe(-32602);
  });

  it('leaves a tasks/get without a string taskId to params validation', () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { _meta: taskMeta } };
    expect(
      check({ 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tasks/get' }, body),
    ).toEqual({ ok: true });
  });

  it('accepts a notification without routing headers but rejects disagreeing ones', () => {
    const note = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } };
    expect(check({}, note)).toEqual({ ok: true });
    expect(
      check(
        { 'Mcp-Method': 'notifications/cancelled', 'MCP-Protocol-Version': '2026-07-28' },
        note,
      ),
    ).toEqual({ ok: true });
    expect(mismatchOf(check({ 'Mcp-Method': 'tools/list' }, note)).code).toBe(-32020);
  });
});

describe('the client side: buildRoutingHeaders and buildRequestMeta', () => {
  it('builds headers and _meta that the server-side checks accept, for every method', () => {
    const cases: [string, Record<string, unknown>][] = [
      ['server/discover', {}],
      ['tools/list', {}],
      ['tools/call', { name: 'generate_report', arguments: { size: 'small' } }],
      ['tasks/get', { taskId: 'tsk_1' }],
      ['tasks/update', { taskId: 'tsk_1', inputResponses: {} }],
      ['tasks/cancel', { taskId: 'tsk_1' }],
      ['subscriptions/listen', { notifications: { taskIds: ['tsk_1'] } }],
    ];
    for (const [method, params] of cases) {
      const meta = buildRequestMeta({ clientCapabilities: { extensions: {} } });
      const body = { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } };
      expect(check(buildRoutingHeaders(method, params, '2026-07-28'), body)).toEqual({ ok: true });
      expect(validateRequestMeta(body.params).ok).toBe(true);
    }
  });

  it('mirrors params.name for tools/call and params.taskId for task methods, nothing else', () => {
    expect(buildRoutingHeaders('tools/call', { name: 'greet' }, '2026-07-28')).toEqual({
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': 'greet',
    });
    expect(buildRoutingHeaders('tasks/cancel', { taskId: 'tsk_9' }, '2026-07-28')).toEqual({
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tasks/cancel',
      'Mcp-Name': 'tsk_9',
    });
    expect(buildRoutingHeaders('tools/list', { name: 'x' }, '2026-07-28')).toEqual({
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/list',
    });
  });

  it.each(['café', ' padded ', 'line\nbreak', '=?base64?abc?='])(
    'encodes %j as =?base64?…?= and decodes it back',
    (value) => {
      const encoded = encodeHeaderValue(value);
      expect(encoded).toMatch(/^=\?base64\?[A-Za-z0-9+/=]*\?=$/);
      expect(decodeHeaderValue(encoded)).toBe(value);
    },
  );

  it('leaves a plain ASCII name as it is', () => {
    expect(encodeHeaderValue('generate_report')).toBe('generate_report');
    expect(encodeHeaderValue('café')).toBe(b64('café'));
  });

  it('puts clientInfo in _meta only when given, under the reserved keys', () => {
    expect(buildRequestMeta({ clientCapabilities: {} })).toEqual({
      [V]: '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    });
    expect(
      buildRequestMeta({
        protocolVersion: '2026-07-28',
        clientCapabilities: { elicitation: {} },
        clientInfo: { name: 'c', version: '1' },
      }),
    ).toEqual({
      [V]: '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
      'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
    });
  });
});
