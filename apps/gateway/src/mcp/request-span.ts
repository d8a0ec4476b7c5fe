import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Context,
  type Link,
} from '@opentelemetry/api';
import { carrierFrom, contextFromCarrier } from '@mcp-tasks/tracing';
import type { HandlerOutcome, RequestContext } from './context.js';

const tracer = trace.getTracer('@mcp-tasks/gateway');

/** Reads a Fetch API `Headers` for the W3C propagator. */
const HEADERS_GETTER = {
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
  keys: (carrier: Headers) => [...carrier.keys()],
};

/**
 * Where a request's span hangs (OpenTelemetry MCP semantic conventions, SEP-414): under the trace
 * context in `params._meta` when the client sent one, the HTTP request's `traceparent` then only
 * linked (a proxy's span is not the caller's); under the HTTP context when `_meta` has none.
 */
function parentOf(ctx: RequestContext, headers: Headers): { parent: Context; links: Link[] } {
  const fromHttp = propagation.extract(ROOT_CONTEXT, headers, HEADERS_GETTER);
  const httpSpan = trace.getSpanContext(fromHttp);
  const fromMeta = contextFromCarrier(carrierFrom(ctx.meta.raw));
  if (fromMeta === undefined) return { parent: fromHttp, links: [] };
  const links =
    httpSpan !== undefined && trace.isSpanContextValid(httpSpan) ? [{ context: httpSpan }] : [];
  return { parent: fromMeta, links };
}

/** The task a request names (tasks/*) or made (a tools/call answered with a task). */
function taskIdOf(ctx: RequestContext, outcome: HandlerOutcome | undefined): string | undefined {
  if (typeof ctx.params.taskId === 'string') return ctx.params.taskId;
  if (outcome?.kind !== 'result' || outcome.result.resultType !== 'task') return undefined;
  const taskId = outcome.result.taskId;
  return typeof taskId === 'string' ? taskId : undefined;
}

/**
 * Runs one MCP request's handler inside its SERVER span, named `{mcp.method.name} {tool}` with
 * the MCP semantic conventions' attributes, plus the tenant and the task. Called only while
 * tracing is on; the span is the parent the create stores on the task row.
 */
export async function traceRequest(
  ctx: RequestContext,
  headers: Headers,
  run: () => Promise<HandlerOutcome>,
): Promise<HandlerOutcome> {
  const toolName =
    ctx.method === 'tools/call' && typeof ctx.params.name === 'string'
      ? ctx.params.name
      : undefined;
  const { parent, links } = parentOf(ctx, headers);
  const span = tracer.startSpan(
    toolName === undefined ? ctx.method : `${ctx.method} ${toolName}`,
    {
      kind: SpanKind.SERVER,
      links,
      attributes: {
        'mcp.method.name': ctx.method,
        'mcp.protocol.version': ctx.meta.protocolVersion,
        'jsonrpc.request.id': String(ctx.id),
        'mcp_tasks.tenant': ctx.identity.tenant,
        ...(toolName === undefined
          ? {}
          : { 'gen_ai.tool.name': toolName, 'gen_ai.operation.name': 'execute_tool' }),
      },
    },
    parent,
  );
  try {
    const outcome = await context.with(trace.setSpan(parent, span), run);
    const taskId = taskIdOf(ctx, outcome);
    if (taskId !== undefined) span.setAttribute('mcp_tasks.task.id', taskId);
    return outcome;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    span.setAttribute(
      'error.type',
      typeof code === 'number' ? String(code) : (error as Error).name,
    );
    if (typeof code === 'number') span.setAttribute('rpc.response.status_code', String(code));
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    const taskId = taskIdOf(ctx, undefined);
    if (taskId !== undefined) span.setAttribute('mcp_tasks.task.id', taskId);
    throw error;
  } finally {
    span.end();
  }
}
