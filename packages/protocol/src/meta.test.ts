import { describe, expect, it } from 'vitest';
import {
  declaresTasksExtension,
  missingCapabilityError,
  requireTasksExtension,
} from './capabilities.js';
import { validateRequestMeta, type MetaValidation } from './meta.js';
import type { ProtocolError } from './errors.js';
import { seedMetaWithClientInfo, taskMeta } from '../test/wire-fixtures.js';

const V = 'io.modelcontextprotocol/protocolVersion';
const C = 'io.modelcontextprotocol/clientCapabilities';

function errorOf(result: MetaValidation | { ok: boolean; error?: ProtocolError }): ProtocolError {
  if (result.ok || !('error' in result) || result.error === undefined)
    throw new Error('expected a failure');
  return result.error;
}

describe('per-request _meta (R2, R3)', () => {
  it('accepts the seed _meta and reads clientInfo', () => {
    const result = validateRequestMeta(seedMetaWithClientInfo);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.meta.protocolVersion).toBe('2026-07-28');
    expect(result.meta.clientCapabilities).toEqual({
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    });
    expect(result.meta.clientInfo).toEqual({ name: 'lesson-client', version: '1.0.0' });
  });

  it('serves a request without clientInfo', () => {
    const result = validateRequestMeta({ _meta: taskMeta });
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.meta.clientInfo).toBeUndefined();
  });

  it.each([
    ['missing params', undefined, /Missing params/],
    ['missing _meta', { name: 'greet' }, /Missing params\._meta/],
    ['a non-object _meta', { _meta: 'x' }, /params\._meta must be an object/],
    [
      'a missing version',
      { _meta: { [C]: {} } },
      /Missing params\._meta\["io\.modelcontextprotocol\/protocolVersion"\]/,
    ],
    [
      'a numeric version',
      { _meta: { [V]: 20260728, [C]: {} } },
      /must be a string .* received a number/,
    ],
    [
      'missing capabilities',
      { _meta: { [V]: '2026-07-28' } },
      /Missing params\._meta\["io\.modelcontextprotocol\/clientCapabilities"\]/,
    ],
    [
      'array capabilities',
      { _meta: { [V]: '2026-07-28', [C]: [] } },
      /must be an object .* received an array/,
    ],
  ])('answers -32602 without data for %s', (_label, params, message) => {
    const error = errorOf(validateRequestMeta(params));
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(message);
    expect(error.data).toBeUndefined();
  });

  it('answers -32022 with the exact supported/requested data for an unknown version', () => {
    const error = errorOf(validateRequestMeta({ _meta: { [V]: 'v999.0.0', [C]: {} } }));
    expect(error.code).toBe(-32022);
    expect(error.data).toStrictEqual({ supported: ['2026-07-28'], requested: 'v999.0.0' });
    expect(error.toJsonRpcError()).toStrictEqual({
      code: -32022,
      message: 'Unsupported protocol version "v999.0.0": this server supports "2026-07-28"',
      data: { supported: ['2026-07-28'], requested: 'v999.0.0' },
    });
  });

  it('checks the version before the capabilities (R3)', () => {
    expect(errorOf(validateRequestMeta({ _meta: { [V]: '2025-11-25' } })).code).toBe(-32022);
  });
});

describe('Tasks extension negotiation (R4)', () => {
  it('recognises a declaring request', () => {
    expect(declaresTasksExtension({ clientCapabilities: taskMeta[C] })).toBe(true);
    expect(requireTasksExtension({ clientCapabilities: taskMeta[C] })).toEqual({ ok: true });
  });

  it.each([
    ['no capabilities', {}],
    ['only legacy capabilities.tasks', { tasks: { requests: { tools: { call: {} } } } }],
    ['another extension', { extensions: { 'io.example/other': {} } }],
    ['a non-object declaration', { extensions: { 'io.modelcontextprotocol/tasks': true } }],
  ])('treats %s as non-declaring and answers -32021 with the exact data', (_label, caps) => {
    expect(declaresTasksExtension({ clientCapabilities: caps })).toBe(false);
    const error = errorOf(requireTasksExtension({ clientCapabilities: caps }, 'tasks/get'));
    expect(error.code).toBe(-32021);
    expect(error.data).toStrictEqual({
      requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    });
    expect(error.message).toMatch(/^tasks\/get requires the Tasks extension/);
  });

  it('builds a generic -32021 naming the required capabilities', () => {
    const error = missingCapabilityError({ sampling: {} });
    expect(error.toJsonRpcError()).toStrictEqual({
      code: -32021,
      message: error.message,
      data: { requiredCapabilities: { sampling: {} } },
    });
    expect(error.message).toContain('{"sampling":{}}');
  });
});
