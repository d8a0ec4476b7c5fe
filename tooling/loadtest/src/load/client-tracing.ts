import { context, SpanKind, trace, type Span } from '@opentelemetry/api';
import { parseTracingEnv, startTracing, type RunningTracing } from '@mcp-tasks/tracing';

/** The load test's own spans; the gateways and workers it starts default to their own names. */
export const LOADTEST_SERVICE_NAME = 'mcp-tasks-loadtest';

/**
 * Starts the SDK in the load-test process when OpenTelemetry's own variables ask for it (the
 * rule the apps follow, docs/tracing.md); undefined when tracing is off. The stack's processes
 * inherit the same variables, so a task's trace runs from the client's span through both apps.
 */
export async function startClientTracing(
  env: Record<string, string | undefined>,
): Promise<RunningTracing | undefined> {
  const parsed = parseTracingEnv(env);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  if (!parsed.settings.enabled) return undefined;
  return startTracing({
    defaultServiceName: LOADTEST_SERVICE_NAME,
    protocol: parsed.settings.protocol,
  });
}

/**
 * Runs one lifecycle inside its client span (`loadtest.task`, create → terminal), active for
 * every request it sends, so @mcp-tasks/client's request builder puts it into `_meta`. With no
 * SDK registered the span is the API's no-op one and nothing is recorded.
 */
export async function withTaskSpan<T>(
  attributes: Record<string, string>,
  run: (span: Span) => Promise<T>,
): Promise<T> {
  const span = trace
    .getTracer(LOADTEST_SERVICE_NAME)
    .startSpan('loadtest.task', { kind: SpanKind.CLIENT, attributes });
  try {
    return await context.with(trace.setSpan(context.active(), span), () => run(span));
  } finally {
    span.end();
  }
}

/** The active client span's trace id, when it is recorded (tracing on and sampled). */
export function activeTraceId(): string | undefined {
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span.spanContext().traceId : undefined;
}
