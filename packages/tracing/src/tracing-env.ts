/** The two OTLP encodings over HTTP the exporters speak; gRPC is not shipped. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Whether tracing runs, and how spans leave the process; everything else is the SDK's own env. */
export type TracingSettings = { enabled: false } | { enabled: true; protocol: OtlpProtocol };

export type TracingEnvResult =
  { ok: true; settings: TracingSettings } | { ok: false; problems: string[] };

const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json'];

/** Every variable parseTracingEnv reads (the apps' READMEs document each: tracing-env.test.ts). */
export const TRACING_ENV_NAMES = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_TRACES_EXPORTER',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_SDK_DISABLED',
] as const;

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === '' ? undefined : value.trim();

/**
 * OpenTelemetry's own variables decide (docs/tracing.md): on when an OTLP endpoint is named or
 * `OTEL_TRACES_EXPORTER=otlp`; `OTEL_TRACES_EXPORTER=none` or `OTEL_SDK_DISABLED=true` turn it off.
 * Read by each app's env parsing, the one place that reads `process.env`; the SDK reads the rest
 * (endpoint, headers, sampler, resource attributes) itself once it is loaded.
 */
export function parseTracingEnv(env: Record<string, string | undefined>): TracingEnvResult {
  const problems: string[] = [];
  const exporter = nonEmpty(env.OTEL_TRACES_EXPORTER);
  if (exporter !== undefined && exporter !== 'otlp' && exporter !== 'none') {
    problems.push(
      `OTEL_TRACES_EXPORTER=${exporter}: only "otlp" (send traces) and "none" (off) are supported`,
    );
  }
  const protocolVariable =
    nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) !== undefined
      ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
      : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = nonEmpty(env[protocolVariable]) ?? 'http/protobuf';
  if (!PROTOCOLS.includes(protocol)) {
    problems.push(
      `${protocolVariable}=${protocol}: use http/protobuf (the default) or http/json; grpc is not shipped`,
    );
  }
  if (problems.length > 0) return { ok: false, problems };
  const disabled = exporter === 'none' || nonEmpty(env.OTEL_SDK_DISABLED) === 'true';
  const requested =
    exporter === 'otlp' ||
    nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) !== undefined ||
    nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) !== undefined;
  if (disabled || !requested) return { ok: true, settings: { enabled: false } };
  return { ok: true, settings: { enabled: true, protocol: protocol as OtlpProtocol } };
}
