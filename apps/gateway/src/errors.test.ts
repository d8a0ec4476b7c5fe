import { describe, expect, it } from 'vitest';
import { mapError, retryLater } from './errors.js';

describe('retryLater', () => {
  it('answers 503 with -32603, the reason, the wait in ms and Retry-After in whole seconds', () => {
    const mapped = mapError(
      retryLater({ reason: 'overloaded', message: 'Too many creates; retry', retryAfterMs: 1500 }),
    );
    expect(mapped.status).toBe(503);
    expect(mapped.headers).toEqual({ 'Retry-After': '2' });
    expect(mapped.unexpected).toBe(false);
    expect(mapped.error.toJsonRpcError()).toEqual({
      code: -32603,
      message: 'Too many creates; retry',
      data: { reason: 'overloaded', retryAfterMs: 1500 },
    });
  });

  it('answers a caller over its own limit with 429 and -32600, keeping the limit it names', () => {
    const mapped = mapError(
      retryLater({
        status: 429,
        reason: 'tenant_rate_limited',
        message: 'Over the create rate',
        retryAfterMs: 200,
        data: { limit: 'MCP_TENANT_CREATE_RATE', value: 50 },
      }),
    );
    expect(mapped.status).toBe(429);
    expect(mapped.headers).toEqual({ 'Retry-After': '1' });
    expect(mapped.error.toJsonRpcError()).toEqual({
      code: -32600,
      message: 'Over the create rate',
      data: {
        reason: 'tenant_rate_limited',
        retryAfterMs: 200,
        limit: 'MCP_TENANT_CREATE_RATE',
        value: 50,
      },
    });
  });
});
