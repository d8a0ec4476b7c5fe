import { ROOT_CONTEXT, TraceFlags, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from './client.js';
import { DEFAULT_FRAMING, buildRequest } from './wire.js';

const SPAN = {
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: 'b7ad6b7169203331',
  traceFlags: TraceFlags.SAMPLED,
};
const inSpan = <T>(run: () => T): T => context.with(trace.setSpanContext(ROOT_CONTEXT, SPAN), run);
const metaOf = () =>
  buildRequest('tools/call', { name: 'greet' }, { id: 1, framing: DEFAULT_FRAMING }).body.params
    ._meta as Record<string, unknown>;

// What an application's SDK registers; the client itself registers nothing.
beforeAll(() => context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
afterAll(() => context.disable());
afterEach(() => propagation.disable());

describe('trace context in _meta', () => {
  it('sends the active span as an unprefixed traceparent when an OpenTelemetry propagator is registered', () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    expect(inSpan(metaOf).traceparent).toBe(`00-${SPAN.traceId}-${SPAN.spanId}-01`);
  });

  it('sends no trace keys without an SDK, nor outside a span', () => {
    expect(Object.keys(inSpan(metaOf))).not.toContain('traceparent');
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    expect(Object.keys(metaOf())).not.toContain('traceparent');
  });

  it('keeps a traceparent the caller put in _meta itself', () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const built = inSpan(() =>
      buildRequest(
        'tools/call',
        {
          name: 'greet',
          _meta: { traceparent: '00-11111111111111111111111111111111-2222222222222222-01' },
        },
        { id: 1, framing: DEFAULT_FRAMING },
      ),
    );
    expect((built.body.params._meta as Record<string, unknown>).traceparent).toBe(
      '00-11111111111111111111111111111111-2222222222222222-01',
    );
  });

  it("sends createClient's traceContext over the active span's, and a request's own _meta over both", async () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const sent: Record<string, unknown>[] = [];
    const client = createClient({
      url: 'http://127.0.0.1:1/mcp',
      traceContext: {
        traceparent: '00-33333333333333333333333333333333-4444444444444444-01',
        tracestate: 'v=1',
      },
      fetch: (_url, init) => {
        const body = JSON.parse(init?.body as string) as { id: number; params: { _meta: object } };
        sent.push(body.params._meta as Record<string, unknown>);
        return Promise.resolve(
          new Response(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: {} }), {
            headers: { 'content-type': 'application/json' },
          }),
        );
      },
    });
    await inSpan(() => client.request('tools/list'));
    await client.request('tools/list', {
      _meta: { traceparent: '00-55555555555555555555555555555555-6666666666666666-00' },
    });
    expect(sent.map((meta) => [meta.traceparent, meta.tracestate])).toEqual([
      ['00-33333333333333333333333333333333-4444444444444444-01', 'v=1'],
      ['00-55555555555555555555555555555555-6666666666666666-00', 'v=1'],
    ]);
  });
});
