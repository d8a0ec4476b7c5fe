import { SpanKind, SpanStatusCode, TraceFlags, context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';
import { numberOf, readMessage, textOf } from './protobuf-reader.js';

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

const PARENT = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' };
const LINKED = { traceId: '11111111111111111111111111111111', spanId: '2222222222222222' };
const START_MS = 1_700_000_000_123;

/** One span with every field the receiver keeps, exported by the SDK's own exporter. */
async function exportOneSpan(exporter: JsonExporter | ProtobufExporter): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'receiver-test', 'host.name': 'h1' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('receiver-test');
  const parent = trace.setSpanContext(context.active(), {
    ...PARENT,
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
  const span = tracer.startSpan(
    'tools/call greet',
    {
      kind: SpanKind.SERVER,
      startTime: START_MS,
      attributes: { text: 'hi', flag: true, count: 42, ratio: 0.5, list: ['a', 'b'] },
      links: [{ context: { ...LINKED, traceFlags: TraceFlags.SAMPLED } }],
    },
    parent,
  );
  span.addEvent('input_required', { 'mcp_tasks.input.keys': ['name'] }, START_MS + 1);
  span.setStatus({ code: SpanStatusCode.ERROR, message: 'boom' });
  span.end(START_MS + 2);
  await provider.shutdown();
}

/** Spans received since the test began. */
let seen = 0;
const newSpans = () => receiver.spans().slice(seen);
beforeEach(() => {
  seen = receiver.spans().length;
});

describe('the OTLP/HTTP test receiver', () => {
  it.each([
    [
      'http/json',
      'application/json',
      () => new JsonExporter({ url: `${receiver.endpoint}/v1/traces` }),
    ],
    [
      'http/protobuf',
      'application/x-protobuf',
      () => new ProtobufExporter({ url: `${receiver.endpoint}/v1/traces` }),
    ],
  ])('decodes an %s export to the exact span', async (_protocol, contentType, exporter) => {
    const before = receiver.contentTypes().length;
    await exportOneSpan(exporter());
    expect(receiver.contentTypes().slice(before)).toEqual([contentType]);
    const spans = newSpans();
    expect(spans).toHaveLength(1);
    const span = spans[0]!;
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span).toEqual({
      serviceName: 'receiver-test',
      resource: expect.objectContaining({
        'service.name': 'receiver-test',
        'host.name': 'h1',
      }) as unknown,
      traceId: PARENT.traceId,
      spanId: span.spanId,
      parentSpanId: PARENT.spanId,
      name: 'tools/call greet',
      kind: 2,
      startTimeUnixNano: BigInt(START_MS) * 1_000_000n,
      endTimeUnixNano: BigInt(START_MS + 2) * 1_000_000n,
      attributes: { text: 'hi', flag: true, count: 42, ratio: 0.5, list: ['a', 'b'] },
      events: [{ name: 'input_required', attributes: { 'mcp_tasks.input.keys': ['name'] } }],
      links: [LINKED],
      statusCode: 2,
    });
  });

  it('answers an export with 200 and an empty ExportTraceServiceResponse in its encoding', async () => {
    const url = `${receiver.endpoint}/v1/traces`;
    const json = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ resourceSpans: [] }),
    });
    expect([json.status, json.headers.get('content-type'), await json.text()]).toEqual([
      200,
      'application/json',
      '{}',
    ]);
    const protobuf = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: new Uint8Array(),
    });
    expect(protobuf.status).toBe(200);
    expect(protobuf.headers.get('content-type')).toBe('application/x-protobuf');
    expect((await protobuf.arrayBuffer()).byteLength).toBe(0);
  });

  it('refuses a malformed http/json body with 400 and a JSON Status naming the fault', async () => {
    const response = await fetch(`${receiver.endpoint}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"resourceSpans": [',
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json');
    const status = (await response.json()) as { code: number; message: string };
    expect(status.code).toBe(3);
    expect(status.message).toMatch(/^JSON: /);
    expect(newSpans()).toEqual([]);
  });

  it('refuses a malformed http/protobuf body with 400 and a protobuf Status naming the fault', async () => {
    const before = receiver.spanCount();
    // An ExportTraceServiceRequest whose field 1 announces 127 bytes and carries 1.
    const response = await fetch(`${receiver.endpoint}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: new Uint8Array([0x0a, 0x7f, 0x00]),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/x-protobuf');
    const fields = readMessage(new Uint8Array(await response.arrayBuffer()));
    expect(
      fields.map((f) => [f.field, f.field === 2 ? textOf(f.value) : numberOf(f.value)]),
    ).toEqual([
      [1, 3n],
      [2, 'protobuf: truncated field'],
    ]);
    expect(receiver.spanCount()).toBe(before);
  });

  it('answers 415 to another encoding and 404 to another path or method', async () => {
    const url = `${receiver.endpoint}/v1/traces`;
    const post = (target: string, type: string) =>
      fetch(target, { method: 'POST', headers: { 'content-type': type }, body: '{}' });
    expect((await post(url, 'text/plain')).status).toBe(415);
    expect((await post(`${receiver.endpoint}/v1/metrics`, 'application/json')).status).toBe(404);
    expect((await fetch(url)).status).toBe(404);
  });
});
