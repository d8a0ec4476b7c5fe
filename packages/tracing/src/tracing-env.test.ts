import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TRACING_ENV_NAMES, parseTracingEnv } from './tracing-env.js';

describe('parseTracingEnv', () => {
  it('is off when no OpenTelemetry variable asks for traces', () => {
    expect(parseTracingEnv({})).toEqual({ ok: true, settings: { enabled: false } });
    expect(parseTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toEqual({
      ok: true,
      settings: { enabled: false },
    });
  });

  it('is on with an endpoint, a traces endpoint or OTEL_TRACES_EXPORTER=otlp, protobuf by default', () => {
    const on = { ok: true, settings: { enabled: true, protocol: 'http/protobuf' } };
    expect(parseTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual(on);
    expect(
      parseTracingEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }),
    ).toEqual(on);
    expect(parseTracingEnv({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual(on);
  });

  it('takes the traces protocol before the general one', () => {
    expect(
      parseTracingEnv({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      }),
    ).toEqual({ ok: true, settings: { enabled: true, protocol: 'http/json' } });
  });

  it('stays off with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true, whatever else is set', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' };
    expect(parseTracingEnv({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).ok).toBe(true);
    expect(parseTracingEnv({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toMatchObject({
      settings: { enabled: false },
    });
    expect(parseTracingEnv({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toMatchObject({
      settings: { enabled: false },
    });
  });

  it('names each unsupported value in one line', () => {
    expect(
      parseTracingEnv({ OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    ).toEqual({
      ok: false,
      problems: [
        'OTEL_TRACES_EXPORTER=zipkin: only "otlp" (send traces) and "none" (off) are supported',
        'OTEL_EXPORTER_OTLP_PROTOCOL=grpc: use http/protobuf (the default) or http/json; grpc is not shipped',
      ],
    });
  });
});

describe.each(['gateway', 'worker'])('apps/%s/README.md', (app) => {
  it('documents every tracing variable the app reads', () => {
    const readme = readFileSync(new URL(`../../../apps/${app}/README.md`, import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Tracing (OpenTelemetry)'));
    const table = section.slice(0, section.indexOf('\n## '));
    expect(TRACING_ENV_NAMES.filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
  });
});
