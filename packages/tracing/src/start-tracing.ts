import type { OtlpProtocol } from './tracing-env.js';

export interface StartTracingOptions {
  /** `service.name` unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names another. */
  defaultServiceName: string;
  protocol: OtlpProtocol;
}

export interface RunningTracing {
  /** Sends the spans still buffered, then stops; call last on shutdown. */
  shutdown(): Promise<void>;
}

/**
 * Loads and registers the SDK: a batch processor to the OTLP/HTTP exporter, W3C trace context
 * and baggage propagation, and the `pg`, `ioredis` and `undici` instrumentations. Everything is
 * imported here, on demand, so a process with tracing off never loads the SDK. Call it before
 * the app's own modules are imported: the instrumentations patch `pg` and `ioredis` as they load
 * (an ESM hook is registered for that).
 */
export async function startTracing(options: StartTracingOptions): Promise<RunningTracing> {
  const { register } = await import('node:module');
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const [
    { NodeTracerProvider },
    { BatchSpanProcessor },
    { defaultResource, detectResources, envDetector, resourceFromAttributes },
    { W3CTraceContextPropagator, W3CBaggagePropagator, CompositePropagator },
    { registerInstrumentations },
    { PgInstrumentation },
    { IORedisInstrumentation },
    { UndiciInstrumentation },
    { ATTR_SERVICE_NAME },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/core'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('@opentelemetry/instrumentation-undici'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  const exporter =
    options.protocol === 'http/json'
      ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter()
      : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.defaultServiceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  // The sampler is the SDK's default: OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG.
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  provider.register({
    propagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  });
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation({ requireParentforSpans: true }),
    ],
  });
  return { shutdown: () => provider.shutdown() };
}
