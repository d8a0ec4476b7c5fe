import { ROOT_CONTEXT, TraceFlags, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
});
