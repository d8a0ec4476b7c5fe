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

describe('mapError', () => {
  it('answers a store outage with 503, Retry-After and the store_unavailable reason and cause', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), {
      code: 'ECONNREFUSED',
    });
    const mapped = mapError(refused);
    expect(mapped).toMatchObject({ status: 503, unexpected: false, outage: true });
    expect(mapped.headers).toEqual({ 'Retry-After': '1' });
    // The driver's message (hosts, ports) stays in the log.
    expect(mapped.error.toJsonRpcError()).toEqual({
      code: -32603,
      message: 'task store unavailable (cannot connect to the database); retry in 1 s',
      data: { reason: 'store_unavailable', retryAfterMs: 1000, cause: 'unreachable' },
    });
  });

  it('names a write refused by a standby after a failover', () => {
    const readOnly = Object.assign(new Error('cannot execute UPDATE in a read-only transaction'), {
      code: '25006',
      severity: 'ERROR',
    });
    expect(mapError(readOnly).error.toJsonRpcError()).toEqual({
      code: -32603,
      message:
        'task store unavailable (the database is read-only, as during a failover); retry in 1 s',
      data: { reason: 'store_unavailable', retryAfterMs: 1000, cause: 'read_only' },
    });
  });

  it('keeps 500 "Internal error" for a bug, without its message', () => {
    const mapped = mapError(new TypeError('cannot read properties of undefined'));
    expect(mapped).toMatchObject({ status: 500, headers: {}, unexpected: true, outage: false });
    expect(mapped.error.toJsonRpcError()).toEqual({ code: -32603, message: 'Internal error' });
  });
});
