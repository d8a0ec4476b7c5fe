import {
  bytesOf,
  hexOf,
  numberOf,
  readMessage,
  textOf,
  type WireValue,
} from './protobuf-reader.js';

/** One span as the receiver collected it, the same from http/protobuf and http/json. */
export interface CollectedSpan {
  serviceName: string;
  resource: Record<string, unknown>;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string }[];
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

const KIND_NAMES = [
  '',
  'SPAN_KIND_INTERNAL',
  'SPAN_KIND_SERVER',
  'SPAN_KIND_CLIENT',
  'SPAN_KIND_PRODUCER',
  'SPAN_KIND_CONSUMER',
];

const serviceNameOf = (resource: Record<string, unknown>): string => {
  const name = resource['service.name'];
  return typeof name === 'string' ? name : '';
};

// ---- http/protobuf (opentelemetry/proto/trace/v1/trace.proto) ----

function anyValue(value: WireValue): unknown {
  for (const { field, value: inner } of readMessage(bytesOf(value))) {
    switch (field) {
      case 1:
        return textOf(inner);
      case 2:
        return numberOf(inner) !== 0n;
      case 3:
        return Number(BigInt.asIntN(64, numberOf(inner)));
      case 4: {
        const buffer = new DataView(new ArrayBuffer(8));
        buffer.setBigUint64(0, numberOf(inner), true);
        return buffer.getFloat64(0, true);
      }
      case 5:
        return readMessage(bytesOf(inner))
          .filter((f) => f.field === 1)
          .map((f) => anyValue(f.value));
      case 7:
        return hexOf(inner);
    }
  }
  return undefined;
}

function keyValues(values: WireValue[]): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const value of values) {
    let key = '';
    let item: unknown;
    for (const { field, value: inner } of readMessage(bytesOf(value))) {
      if (field === 1) key = textOf(inner);
      if (field === 2) item = anyValue(inner);
    }
    record[key] = item;
  }
  return record;
}

const fieldsOf = (value: WireValue, wanted: number): WireValue[] =>
  readMessage(bytesOf(value))
    .filter((f) => f.field === wanted)
    .map((f) => f.value);

function protobufSpan(value: WireValue, resource: Record<string, unknown>): CollectedSpan {
  const span: CollectedSpan = {
    serviceName: serviceNameOf(resource),
    resource,
    traceId: '',
    spanId: '',
    parentSpanId: '',
    name: '',
    kind: 0,
    startTimeUnixNano: 0n,
    endTimeUnixNano: 0n,
    attributes: {},
    events: [],
    links: [],
    statusCode: 0,
  };
  const attributes: WireValue[] = [];
  for (const { field, value: inner } of readMessage(bytesOf(value))) {
    if (field === 1) span.traceId = hexOf(inner);
    else if (field === 2) span.spanId = hexOf(inner);
    else if (field === 4) span.parentSpanId = hexOf(inner);
    else if (field === 5) span.name = textOf(inner);
    else if (field === 6) span.kind = Number(numberOf(inner));
    else if (field === 7) span.startTimeUnixNano = numberOf(inner);
    else if (field === 8) span.endTimeUnixNano = numberOf(inner);
    else if (field === 9) attributes.push(inner);
    else if (field === 11) {
      const [name] = fieldsOf(inner, 2);
      span.events.push({
        name: name === undefined ? '' : textOf(name),
        attributes: keyValues(fieldsOf(inner, 3)),
      });
    } else if (field === 13) {
      const [traceId] = fieldsOf(inner, 1);
      const [spanId] = fieldsOf(inner, 2);
      span.links.push({
        traceId: traceId === undefined ? '' : hexOf(traceId),
        spanId: spanId === undefined ? '' : hexOf(spanId),
      });
    } else if (field === 15) {
      const [code] = fieldsOf(inner, 3);
      span.statusCode = code === undefined ? 0 : Number(numberOf(code));
    }
  }
  span.attributes = keyValues(attributes);
  return span;
}

/** An ExportTraceServiceRequest in protobuf, flattened to its spans. */
export function decodeProtobufExport(body: Uint8Array): CollectedSpan[] {
  const spans: CollectedSpan[] = [];
  for (const { field, value: resourceSpans } of readMessage(body)) {
    if (field !== 1) continue;
    const [resourceValue] = fieldsOf(resourceSpans, 1);
    const resource = resourceValue === undefined ? {} : keyValues(fieldsOf(resourceValue, 1));
    for (const scopeSpans of fieldsOf(resourceSpans, 2)) {
      for (const span of fieldsOf(scopeSpans, 2)) spans.push(protobufSpan(span, resource));
    }
  }
  return spans;
}

// ---- http/json (the same messages, lowerCamelCase, ids in hex, int64 as strings) ----

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
}
type JsonKeyValues = { key: string; value: JsonAnyValue }[] | undefined;

function jsonValue(value: JsonAnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(jsonValue);
  return undefined;
}

const jsonAttributes = (values: JsonKeyValues): Record<string, unknown> =>
  Object.fromEntries((values ?? []).map(({ key, value }) => [key, jsonValue(value)]));

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number | string;
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: JsonKeyValues;
  events?: { name: string; attributes?: JsonKeyValues }[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number | string };
}

interface JsonExport {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValues };
    scopeSpans?: { spans?: JsonSpan[] }[];
  }[];
}

/** An ExportTraceServiceRequest in OTLP/JSON, flattened to its spans. */
export function decodeJsonExport(body: unknown): CollectedSpan[] {
  const spans: CollectedSpan[] = [];
  for (const resourceSpans of (body as JsonExport).resourceSpans ?? []) {
    const resource = jsonAttributes(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          serviceName: serviceNameOf(resource),
          resource,
          traceId: span.traceId.toLowerCase(),
          spanId: span.spanId.toLowerCase(),
          parentSpanId: (span.parentSpanId ?? '').toLowerCase(),
          name: span.name,
          kind: typeof span.kind === 'string' ? KIND_NAMES.indexOf(span.kind) : (span.kind ?? 0),
          startTimeUnixNano: BigInt(span.startTimeUnixNano ?? 0),
          endTimeUnixNano: BigInt(span.endTimeUnixNano ?? 0),
          attributes: jsonAttributes(span.attributes),
          events: (span.events ?? []).map((event) => ({
            name: event.name,
            attributes: jsonAttributes(event.attributes),
          })),
          links: (span.links ?? []).map((link) => ({
            traceId: link.traceId.toLowerCase(),
            spanId: link.spanId.toLowerCase(),
          })),
          statusCode: Number(span.status?.code ?? 0),
        });
      }
    }
  }
  return spans;
}
