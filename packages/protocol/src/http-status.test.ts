import { describe, expect, it } from 'vitest';
import { httpStatusForErrorCode } from './http-status.js';

describe('httpStatusForErrorCode (R24)', () => {
  it.each([
    [-32602, 400],
    [-32022, 400],
    [-32021, 400],
    [-32020, 400],
    [-32700, 400],
    [-32600, 400],
    [-32601, 404],
    [-32603, 500],
  ])('maps %i to HTTP %i', (code, status) => {
    expect(httpStatusForErrorCode(code)).toBe(status);
  });
});
