import { describe, expect, it } from 'vitest';
import { assertTasksExtension, requireTasksExtension } from './capabilities.js';
import type { Check } from './check.js';
import { parseJsonRpcMessage } from './jsonrpc.js';
import { parseRequestMeta, validateRequestMeta } from './meta.js';
import { assertRoutingHeaders, checkRoutingHeaders } from './routing-headers.js';
import { taskMeta, tasksGetRequest } from '../test/wire-fixtures.js';

const V = 'io.modelcontextprotocol/protocolVersion';
const C = 'io.modelcontextprotocol/clientCapabilities';

/** What the throwing form threw, or undefined when it returned. */
function thrownBy(run: () => unknown): unknown {
  try {
    run();
    return undefined;
  } catch (error) {
    return error;
  }
}

function errorOf(result: Check | { ok: false; error: unknown } | { ok: true }): unknown {
  return result.ok ? undefined : result.error;
}

describe('the throwing validators throw exactly the error the checks return', () => {
  it.each([
    ['no params', undefined],
    ['no _meta', {}],
    ['no version', { _meta: { [C]: {} } }],
    ['unsupported version', { _meta: { [V]: 'v999', [C]: {} } }],
    ['capabilities not an object', { _meta: { [V]: '2026-07-28', [C]: 1 } }],
  ])('parseRequestMeta: %s', (_, params) => {
    const expected = errorOf(validateRequestMeta(params));
    expect(expected).toBeDefined();
    expect(thrownBy(() => parseRequestMeta(params))).toEqual(expected);
  });

  it('parseRequestMeta returns the meta when valid', () => {
    const valid = validateRequestMeta({ _meta: taskMeta });
    expect(valid.ok && parseRequestMeta({ _meta: taskMeta })).toEqual(valid.ok && valid.meta);
  });

  it('assertTasksExtension', () => {
    const caps = { clientCapabilities: {} };
    expect(thrownBy(() => assertTasksExtension(caps, 'tasks/get'))).toEqual(
      errorOf(requireTasksExtension(caps, 'tasks/get')),
    );
    expect(thrownBy(() => assertTasksExtension({ clientCapabilities: taskMeta[C] }))).toBe(
      undefined,
    );
  });

  it('assertRoutingHeaders', () => {
    const message = parseJsonRpcMessage(tasksGetRequest);
    const missing = new Headers();
    expect(errorOf(checkRoutingHeaders(missing, message))).toBeDefined();
    expect(thrownBy(() => assertRoutingHeaders(missing, message))).toEqual(
      errorOf(checkRoutingHeaders(missing, message)),
    );
  });
});
