import {
  startOtlpReceiver,
  startToolStack,
  type CollectedSpan,
  type OtlpReceiver,
  type ToolStack,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * One OpenTelemetry trace across the queue hop, from real processes: a gateway exporting
 * http/json and workers exporting http/protobuf to the harness's OTLP receiver. The client's
 * traceparent (in `params._meta`, SEP-414) must be the parent of the gateway's request span, and
 * every attempt on any worker must continue that trace (the context stored on the task row).
 */
let receiver: OtlpReceiver;
let stack: ToolStack;

const TRACING_ENV = {
  OTEL_BSP_SCHEDULE_DELAY: '100',
  OTEL_TRACES_SAMPLER: 'parentbased_always_on',
};

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  stack = await startToolStack({
    label: 'traces',
    toolModules: [],
    workers: 0,
    env: {
      ...TRACING_ENV,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // Long enough for a cancel to find the render step running; short enough for the tests.
      REPORT_STEP_MS: '1500',
    },
  });
  await stack.startWorker({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

/** A fresh client trace: a random trace id and the client span's id, as a W3C traceparent. */
function clientTrace(): { traceId: string; spanId: string; traceparent: string } {
  const hex = (bytes: number) =>
    [...crypto.getRandomValues(new Uint8Array(bytes))]
      .map((b) => b.toString(16).padStart(2, '0'))
      .join('');
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const inTrace = (spans: readonly CollectedSpan[], traceId: string) =>
  spans.filter((span) => span.traceId === traceId);
const named = (spans: readonly CollectedSpan[], name: string) =>
  spans.filter((span) => span.name === name);
const childrenOf = (spans: readonly CollectedSpan[], parent: CollectedSpan) =>
  spans.filter((span) => span.parentSpanId === parent.spanId);

async function createReport(trace: { traceparent: string }, headers?: Record<string, string>) {
  const answer = await stack.rpc(
    'tools/call',
    { name: 'generate_report', arguments: { size: 'small' } },
    { meta: { traceparent: trace.traceparent, tracestate: 'client=1' }, headers },
  );
  expect(answer.error).toBeUndefined();
  return answer.result!.taskId as string;
}

const APPROVE = { approve_outline: { action: 'accept', content: { approved: true } } };

describe('traces across the queue hop (gateway and worker processes, OTLP receiver)', () => {
  it('continues the client trace from tools/call through an input round to completed', async () => {
    const client = clientTrace();
    const proxy = clientTrace();
    const taskId = await createReport(client, { traceparent: proxy.traceparent });
    await stack.waitForTask(taskId, (task) => task.status === 'input_required');
    await stack.answer(taskId, APPROVE);
    await stack.waitForTask(taskId);

    const spans = inTrace(
      await receiver.waitFor(
        (all) =>
          named(inTrace(all, client.traceId), 'task.attempt').filter(
            (span) => span.attributes['mcp_tasks.outcome'] === 'completed',
          ).length === 1,
      ),
      client.traceId,
    );
    const [request] = named(spans, 'tools/call generate_report');
    expect(request).toMatchObject({
      serviceName: 'mcp-tasks-gateway',
      parentSpanId: client.spanId,
      kind: 2,
      links: [{ traceId: proxy.traceId, spanId: proxy.spanId }],
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'generate_report',
        'gen_ai.operation.name': 'execute_tool',
        'mcp_tasks.tenant': 'default',
        'mcp_tasks.task.id': taskId,
      },
    });
    // The batched INSERT: one span, linked from the create it carried.
    const insert = named(spans, 'tasks.insert').find((span) =>
      span.links.some((link) => link.spanId === request!.spanId),
    );
    expect(insert).toBeDefined();
    expect(named(spans, 'tasks.wake_up')[0]?.parentSpanId).toBe(request!.spanId);

    // Two attempts, both children of the request: the first pauses for input, the second ends it.
    const attempts = named(spans, 'task.attempt').sort(
      (a, b) =>
        Number(a.attributes['mcp_tasks.attempt']) - Number(b.attributes['mcp_tasks.attempt']),
    );
    expect(
      attempts.map((a) => [a.serviceName, a.parentSpanId, a.attributes['mcp_tasks.outcome']]),
    ).toEqual([
      ['mcp-tasks-worker', request!.spanId, 'input_required'],
      ['mcp-tasks-worker', request!.spanId, 'completed'],
    ]);
    expect(attempts[0]!.events.map((event) => event.name)).toEqual(['input_required']);
    expect(attempts[0]!.events[0]!.attributes['mcp_tasks.input.keys']).toEqual(['approve_outline']);
    // The resume is no takeover: it links the attempt before it, and says so.
    expect(attempts[1]!.links).toEqual([{ traceId: client.traceId, spanId: attempts[0]!.spanId }]);
    expect(attempts[1]!.attributes['mcp_tasks.takeover']).toBe(false);
    for (const attempt of attempts) {
      const names = childrenOf(spans, attempt).map((span) => span.name);
      expect(names).toEqual(
        expect.arrayContaining(['task.job_pickup', 'task.claim', 'task.step', 'task.settle']),
      );
    }
    // Second attempt: approve (continue + checkpoint), render 2 sections (1 checkpoint), complete.
    const secondChildren = childrenOf(spans, attempts[1]!);
    expect(
      named(secondChildren, 'task.step').map((s) => s.attributes['mcp_tasks.step.outcome']),
    ).toEqual(['continue', 'continue', 'complete']);
    expect(named(secondChildren, 'task.checkpoint')).toHaveLength(2);
    // Postgres statements from the pg instrumentation, inside the trace.
    expect(
      spans.some((span) => span.kind === 3 && span.attributes['db.system.name'] === 'postgresql'),
    ).toBe(true);
    // The tasks/update came with no trace context of its own: a new trace, not this one.
    expect(named(spans, 'tasks/update')).toEqual([]);
  }, 90_000);

  it('shows a cancel as the attempt settled by the cancel', async () => {
    const client = clientTrace();
    const taskId = await createReport(client);
    await stack.waitForTask(taskId, (task) => task.status === 'input_required');
    await stack.answer(taskId, APPROVE);
    await receiver.waitFor(
      (all) =>
        named(inTrace(all, client.traceId), 'task.attempt').length === 1 &&
        named(inTrace(all, client.traceId), 'task.claim').length === 2,
    );
    const cancel = await stack.rpc(
      'tasks/cancel',
      { taskId },
      { meta: { traceparent: client.traceparent } },
    );
    expect(cancel.error).toBeUndefined();
    await stack.waitForTask(taskId);
    // Gateway and worker export on their own schedules: the worker's attempt can arrive before
    // the gateway's cancel span (CI saw it on a loaded machine), so wait for both.
    const spans = inTrace(
      await receiver.waitFor((all) => {
        const trace = inTrace(all, client.traceId);
        return (
          named(trace, 'task.attempt').length === 2 && named(trace, 'tasks/cancel').length === 1
        );
      }),
      client.traceId,
    );
    expect(named(spans, 'tasks/cancel')[0]).toMatchObject({
      parentSpanId: client.spanId,
      attributes: { 'mcp.method.name': 'tasks/cancel', 'mcp_tasks.task.id': taskId },
    });
    const last = named(spans, 'task.attempt').find((a) => a.attributes['mcp_tasks.attempt'] === 2)!;
    expect(last.attributes['mcp_tasks.outcome']).toBe('cancelled');
    const settle = named(childrenOf(spans, last), 'task.settle');
    expect(settle.map((s) => s.attributes['mcp_tasks.settle.cause'])).toContain('abort');
  }, 90_000);
});

describe('a worker SIGKILLed mid-task', () => {
  it('shows both attempts in one trace, the takeover linked to the attempt it replaced', async () => {
    const client = clientTrace();
    const taskId = await createReport(client);
    await stack.waitForTask(taskId, (task) => task.status === 'input_required');
    // The render attempt goes to a worker whose step takes a minute: the only one running.
    await stack.workers[0]!.stop();
    const slow = await stack.startWorker({
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      REPORT_STEP_MS: '60000',
    });
    await stack.answer(taskId, APPROVE);
    // The render attempt's pickup and claim are exported when they end, before its steps.
    const before = await receiver.waitFor(
      (all) => named(inTrace(all, client.traceId), 'task.claim').length === 2,
      90_000,
    );
    const killedClaim = named(inTrace(before, client.traceId), 'task.claim').at(-1)!;
    // The approve step runs, then the first render step sleeps a minute: kill inside it.
    await stack.waitForTask(taskId, (task) => task.statusMessage === 'Rendering section 1 of 2');
    slow.kill('SIGKILL');
    await slow.exited;
    await stack.startWorker({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' });
    const done = await stack.waitForTask(taskId, undefined, 60_000);
    expect(done.status).toBe('completed');

    const spans = inTrace(
      await receiver.waitFor(
        (all) =>
          named(inTrace(all, client.traceId), 'task.attempt').some(
            (a) => a.attributes['mcp_tasks.outcome'] === 'completed',
          ),
        30_000,
      ),
      client.traceId,
    );
    const [request] = named(spans, 'tools/call generate_report');
    const takeover = named(spans, 'task.attempt').find(
      (a) => a.attributes['mcp_tasks.outcome'] === 'completed',
    )!;
    // The killed attempt's span never ended (so was never sent); its claim names it as parent.
    expect(named(spans, 'task.attempt').some((a) => a.spanId === killedClaim.parentSpanId)).toBe(
      false,
    );
    expect(takeover).toMatchObject({
      parentSpanId: request!.spanId,
      links: [{ traceId: client.traceId, spanId: killedClaim.parentSpanId }],
      attributes: { 'mcp_tasks.attempt': 3, 'mcp_tasks.takeover': true, 'mcp_tasks.failures': 1 },
    });
    expect(takeover.attributes['mcp_tasks.worker.id']).not.toBe(
      named(spans, 'task.attempt').find((a) => a.attributes['mcp_tasks.attempt'] === 1)?.attributes[
        'mcp_tasks.worker.id'
      ],
    );
  }, 240_000);
});
