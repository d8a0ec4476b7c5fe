import { describe, expect, it } from 'vitest';
import { ErrorCode, ProtocolError } from './errors.js';
import { jsonRpcError, jsonRpcResult, parseJsonRpcMessage } from './jsonrpc.js';
import { toolsCallRequest } from '../test/wire-fixtures.js';

function rejection(value: unknown): ProtocolError {
  try {
    parseJsonRpcMessage(value);
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error('expected parseJsonRpcMessage to throw');
}

describe('parseJsonRpcMessage', () => {
  it('reads the seed tools/call as a request', () => {
    expect(parseJsonRpcMessage(toolsCallRequest)).toEqual({
      kind: 'request',
      id: 1,
      method: 'tools/call',
      params: toolsCallRequest.params,
    });
  });

  it('treats id null as a request, not a notification (R1)', () => {
    expect(parseJsonRpcMessage({ jsonrpc: '2.0', id: null, method: 'tools/list' })).toEqual({
      kind: 'request',
      id: null,
      method: 'tools/list',
      params: undefined,
    });
  });

  it('treats a message without id as a notification', () => {
    expect(
      parseJsonRpcMessage({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 3 },
      }),
    ).toEqual({
      kind: 'notification',
      method: 'notifications/cancelled',
      params: { requestId: 3 },
    });
  });

  it('accepts string ids', () => {
    expect(parseJsonRpcMessage({ jsonrpc: '2.0', id: 'a', method: 'm' })).toMatchObject({
      kind: 'request',
      id: 'a',
    });
  });

  it('rejects a batch with -32600 saying batches are not supported', () => {
    const error = rejection([toolsCallRequest]);
    expect(error.code).toBe(ErrorCode.InvalidRequest);
    expect(error.message).toMatch(/batches are not supported in MCP 2026-07-28/);
    expect(error.data).toBeUndefined();
  });

  it.each([
    ['a string', 'hello', /received a string/],
    ['null', null, /received null/],
    ['a number', 7, /received a number/],
    [
      'a wrong jsonrpc version',
      { jsonrpc: '1.0', id: 1, method: 'm' },
      /"jsonrpc" must be exactly "2.0"/,
    ],
    ['a missing jsonrpc', { id: 1, method: 'm' }, /"jsonrpc" must be exactly "2.0"/],
    ['a non-string method', { jsonrpc: '2.0', id: 1, method: 5 }, /"method" must be a string/],
    ['a missing method', { jsonrpc: '2.0', id: 1 }, /"method" is missing/],
    ['a response', { jsonrpc: '2.0', id: 1, result: {} }, /not responses/],
    [
      'a boolean id',
      { jsonrpc: '2.0', id: true, method: 'm' },
      /"id" must be a string, a number or null/,
    ],
    [
      'an object id',
      { jsonrpc: '2.0', id: {}, method: 'm' },
      /"id" must be a string, a number or null/,
    ],
    [
      'array params',
      { jsonrpc: '2.0', id: 1, method: 'm', params: [1] },
      /"params" must be an object/,
    ],
    [
      'string params',
      { jsonrpc: '2.0', id: 1, method: 'm', params: 'x' },
      /"params" must be an object/,
    ],
  ])('rejects %s with -32600', (_label, value, message) => {
    const error = rejection(value);
    expect(error.code).toBe(-32600);
    expect(error.message).toMatch(message);
  });
});

describe('wire helpers', () => {
  it('builds an exact result response', () => {
    expect(jsonRpcResult(7, { resultType: 'complete' })).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { resultType: 'complete' },
    });
  });

  it('builds an exact error response, with data only when present', () => {
    expect(jsonRpcError(null, new ProtocolError(-32600, 'bad'))).toStrictEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'bad' },
    });
    expect(
      jsonRpcError(
        'x',
        new ProtocolError(-32022, 'v', { supported: ['2026-07-28'], requested: 'v1' }),
      ),
    ).toStrictEqual({
      jsonrpc: '2.0',
      id: 'x',
      error: { code: -32022, message: 'v', data: { supported: ['2026-07-28'], requested: 'v1' } },
    });
  });
});
