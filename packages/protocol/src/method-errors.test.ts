import { describe, expect, it } from 'vitest';
import { methodNotFoundError } from './method-errors.js';

describe('methodNotFoundError (R5)', () => {
  it.each([
    'tasks/status',
    'tasks/result',
    'tasks/list',
    'initialize',
    'ping',
    'logging/setLevel',
    'resources/subscribe',
    'resources/unsubscribe',
  ])('answers removed %s with -32601 saying it was removed', (method) => {
    const error = methodNotFoundError(method);
    expect(error.code).toBe(-32601);
    expect(error.message).toMatch(/was removed/);
    expect(error.data).toBeUndefined();
  });

  it('answers an unknown method with -32601', () => {
    expect(methodNotFoundError('foo/bar').toJsonRpcError()).toStrictEqual({
      code: -32601,
      message: 'Method not found: foo/bar',
    });
  });
});
