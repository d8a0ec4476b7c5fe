import {
  ROOT_CONTEXT,
  context,
  propagation,
  trace,
  type Context,
  type Link,
  type SpanContext,
} from '@opentelemetry/api';

/**
 * W3C trace context as a plain record: what `params._meta` carries (SEP-414: unprefixed
 * `traceparent`, `tracestate`, `baggage`), what an HTTP request's headers carry, and what the
 * task row keeps (migration 0019).
 */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
  baggage?: string;
}

const CARRIER_KEYS = ['traceparent', 'tracestate', 'baggage'] as const;

/** The carrier's string fields of `record` (a `_meta` object); undefined without a traceparent. */
export function carrierFrom(
  record: Readonly<Record<string, unknown>> | undefined,
): TraceCarrier | undefined {
  if (record === undefined || typeof record.traceparent !== 'string') return undefined;
  const carrier: TraceCarrier = { traceparent: record.traceparent };
  if (typeof record.tracestate === 'string') carrier.tracestate = record.tracestate;
  if (typeof record.baggage === 'string') carrier.baggage = record.baggage;
  return carrier;
}

/** The context a carrier describes (a valid remote span context), or undefined. */
export function contextFromCarrier(carrier: TraceCarrier | undefined): Context | undefined {
  if (carrier === undefined) return undefined;
  const extracted = propagation.extract(ROOT_CONTEXT, carrier);
  const spanContext = trace.getSpanContext(extracted);
  return spanContext !== undefined && trace.isSpanContextValid(spanContext) ? extracted : undefined;
}

/** The active (or given) context as a carrier; undefined when no span is active. */
export function carrierOf(from: Context = context.active()): TraceCarrier | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(from, carrier);
  return carrierFrom(carrier);
}

/** Writes the active context into `meta` (a request's `params._meta`), keys as SEP-414 names them. */
export function injectIntoMeta(
  meta: Record<string, unknown>,
  from: Context = context.active(),
): void {
  const carrier = carrierOf(from);
  if (carrier === undefined) return;
  for (const key of CARRIER_KEYS) if (carrier[key] !== undefined) meta[key] = carrier[key];
}

/** A link to the span a `traceparent` names, for spans that follow it without being its child. */
export function linkTo(traceparent: string | null | undefined): Link[] {
  if (traceparent === null || traceparent === undefined) return [];
  const spanContext: SpanContext | undefined = trace.getSpanContext(
    propagation.extract(ROOT_CONTEXT, { traceparent }),
  );
  return spanContext !== undefined && trace.isSpanContextValid(spanContext)
    ? [{ context: spanContext }]
    : [];
}
