import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOtlpReceiver, type CollectedSpan, type OtlpReceiver } from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli.js';
import { startStack, TOKENS, type Stack } from './support/stack.js';

/**
 * The `mcp-tasks` binary as the parent of a task's trace, across real processes: the CLI gets
 * TRACEPARENT from its environment (as a CI job or a shell script run under a tracer would set
 * it), the gateway and the worker export to the harness's OTLP receiver, and the whole task —
 * request, attempt, steps — hangs under the CLI's span.
 */
let receiver: OtlpReceiver;
let stack: Stack;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  stack = await startStack('client_cli_traces', {
    gateways: 1,
    workers: 1,
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_TRACES_SAMPLER: 'parentbased_always_on',
    },
  });
}, 180_000);
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLI_SPAN_ID = '00f067aa0ba902b7';

async function freshEnv(): Promise<Record<string, string>> {
  return {
    MCP_URL: stack.mcpUrl,
    MCP_TOKEN: TOKENS.alice,
    MCP_TASKS_STATE_DIR: await mkdtemp(join(tmpdir(), 'mcp-tasks-state-')),
  };
}

const named = (spans: readonly CollectedSpan[], name: string) =>
  spans.filter((span) => span.name === name);

describe('mcp-tasks under a TRACEPARENT, against real gateway and worker processes', () => {
  it("makes the CLI's span the parent of the request, and the task's attempt part of its trace", async () => {
    const run = await runCli(['call', 'slow_compute', '--arg', 'seconds=1'], {
      ...(await freshEnv()),
      TRACEPARENT: `00-${TRACE_ID}-${CLI_SPAN_ID}-01`,
      TRACESTATE: 'ci=job-42',
    });
    expect(run.code).toBe(0);
    const taskId = /task (\S+)/.exec(run.stderr)?.[1] ?? '';
    expect(taskId).not.toBe('');

    const spans = (
      await receiver.waitFor((all) =>
        all.some(
          (span) =>
            span.traceId === TRACE_ID &&
            span.name === 'task.attempt' &&
            span.attributes['mcp_tasks.outcome'] === 'completed',
        ),
      )
    ).filter((span) => span.traceId === TRACE_ID);

    const [request] = named(spans, 'tools/call slow_compute');
    expect(request).toMatchObject({
      serviceName: 'mcp-tasks-gateway',
      parentSpanId: CLI_SPAN_ID,
      kind: 2,
      attributes: { 'mcp.method.name': 'tools/call', 'mcp_tasks.task.id': taskId },
    });
    const attempts = named(spans, 'task.attempt');
    expect(
      attempts.map((a) => [a.serviceName, a.parentSpanId, a.attributes['mcp_tasks.outcome']]),
    ).toEqual([['mcp-tasks-worker', request!.spanId, 'completed']]);
    expect(attempts[0]!.attributes['mcp_tasks.task.id']).toBe(taskId);
    // The CLI's polls carry the same context: every request span it caused is the CLI's child.
    const requests = spans.filter(
      (span) => span.serviceName === 'mcp-tasks-gateway' && span.kind === 2,
    );
    expect(requests.length).toBeGreaterThan(1);
    expect(new Set(requests.map((span) => span.parentSpanId))).toEqual(new Set([CLI_SPAN_ID]));
  }, 60_000);

  it('without TRACEPARENT, starts no trace under a foreign parent: the request span is a root', async () => {
    const before = new Set(receiver.spans().map((span) => span.spanId));
    const run = await runCli(['call', 'slow_compute', '--arg', 'seconds=1'], await freshEnv());
    expect(run.code).toBe(0);
    const taskId = /task (\S+)/.exec(run.stderr)?.[1] ?? '';
    const all = await receiver.waitFor((spans) =>
      spans.some(
        (span) => span.name === 'task.attempt' && span.attributes['mcp_tasks.task.id'] === taskId,
      ),
    );
    const request = all.find(
      (span) =>
        !before.has(span.spanId) &&
        span.name === 'tools/call slow_compute' &&
        span.attributes['mcp_tasks.task.id'] === taskId,
    );
    expect(request?.parentSpanId).toBe('');
    const attempt = all.find(
      (span) => span.name === 'task.attempt' && span.attributes['mcp_tasks.task.id'] === taskId,
    );
    expect(attempt).toMatchObject({ traceId: request!.traceId, parentSpanId: request!.spanId });
  }, 60_000);
});
