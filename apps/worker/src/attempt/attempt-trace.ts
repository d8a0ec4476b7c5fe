import { performance } from 'node:perf_hooks';
import {
  SpanKind,
  SpanStatusCode,
  context,
  trace,
  type Context,
  type Span,
  type TimeInput,
} from '@opentelemetry/api';
import { recordAttemptSpan, type Claim, type Db } from '@mcp-tasks/store';
import { carrierOf, contextFromCarrier, linkTo } from '@mcp-tasks/tracing';
import type { JobOutcome } from '../metrics.js';
import type { OutcomeSettler } from './settle-outcome.js';

const tracer = trace.getTracer('@mcp-tasks/worker');

/** A `performance.now()` reading as the wall-clock time a span takes. */
const wallTime = (at: number): TimeInput => performance.timeOrigin + at;

/** When a wake-up reached this worker and when its claim was sent and answered. */
export interface ClaimTimes {
  pickedUpAt: number;
  claimSentAt: number;
  claimedAt: number;
}

/** One attempt's span, the parent of its steps, checkpoints and settle (docs/tracing.md). */
export interface AttemptTrace {
  /** The attempt span's context: run the attempt inside it. */
  readonly context: Context;
  end(outcome: JobOutcome): void;
  fail(error: unknown): void;
}

/**
 * Opens the attempt span under the trace the task's create stored (so every attempt, on any
 * worker, continues the client's trace), with the pickup and the claim as its first children
 * (both are only known to belong to this trace once the claim has read the row, so they are
 * recorded with their measured times). A takeover links the attempt it replaces: that
 * attempt's `traceparent` is kept on the row, written here before any step runs. Returns
 * undefined for a task whose create was not traced.
 */
export async function startAttemptTrace(
  db: Db,
  claim: Claim,
  wakeUp: { taskId: string; workerId: string },
  times: ClaimTimes,
): Promise<AttemptTrace | undefined> {
  if (claim.trace === null) return undefined;
  const parent = contextFromCarrier(claim.trace.context);
  if (parent === undefined) return undefined;
  const { task, fence } = claim;
  const attempt = tracer.startSpan(
    'task.attempt',
    {
      kind: SpanKind.CONSUMER,
      startTime: wallTime(times.pickedUpAt),
      links: linkTo(claim.trace.lastAttempt),
      attributes: {
        'mcp_tasks.task.id': task.id,
        'mcp_tasks.tenant': task.owner.tenant,
        'gen_ai.tool.name': task.operation.toolName,
        'mcp_tasks.attempt': task.attempts,
        'mcp_tasks.lease.epoch': fence.epoch,
        'mcp_tasks.worker.id': wakeUp.workerId,
        'mcp_tasks.takeover': task.failures > 0 && claim.trace.lastAttempt !== null,
        'mcp_tasks.failures': task.failures,
      },
    },
    parent,
  );
  const inAttempt = trace.setSpan(parent, attempt);
  tracer
    .startSpan(
      'task.job_pickup',
      {
        startTime: wallTime(times.pickedUpAt),
        attributes: {
          'messaging.system': 'bullmq',
          'mcp_tasks.wake_up.task.id': wakeUp.taskId,
        },
      },
      inAttempt,
    )
    .end(wallTime(times.claimSentAt));
  tracer
    .startSpan('task.claim', { startTime: wallTime(times.claimSentAt) }, inAttempt)
    .end(wallTime(times.claimedAt));
  const traceparent = carrierOf(inAttempt)?.traceparent;
  // Best effort: tracing must never fail an attempt. Lost, the next attempt just has no link.
  if (traceparent !== undefined) {
    await recordAttemptSpan(db, fence, traceparent).catch((error: unknown) =>
      attempt.addEvent('trace_last_attempt not recorded', { 'error.type': (error as Error).name }),
    );
  }
  return {
    context: inAttempt,
    end(outcome) {
      attempt.setAttribute('mcp_tasks.outcome', outcome);
      attempt.end();
    },
    fail(error) {
      attempt.recordException(error as Error);
      attempt.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      attempt.end();
    },
  };
}

/** Runs `work` in a child span of the active attempt; the span ends with it. */
export async function inSpan<T>(
  name: string,
  attributes: Record<string, string | number | boolean>,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const span = tracer.startSpan(name, { attributes });
  try {
    return await context.with(trace.setSpan(context.active(), span), () => work(span));
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

/** The settler with each last write in a `task.settle` span saying what ended the attempt. */
export function traceSettler(settler: OutcomeSettler): OutcomeSettler {
  const settled =
    (cause: string) =>
    async (span: Span, write: Promise<JobOutcome>): Promise<JobOutcome> => {
      span.setAttribute('mcp_tasks.settle.cause', cause);
      const outcome = await write;
      span.setAttribute('mcp_tasks.outcome', outcome);
      return outcome;
    };
  return {
    afterAbort: (fence, reason) =>
      inSpan('task.settle', { 'mcp_tasks.abort.reason': reason }, (span) =>
        settled('abort')(span, settler.afterAbort(fence, reason)),
      ),
    afterLastStep: (fence, outcome, statusMessage, toolVersion, trx) => {
      // A pause for input is a moment of the attempt, not a span: the attempt ends with it.
      if (outcome.kind === 'input') {
        trace.getActiveSpan()?.addEvent('input_required', {
          'mcp_tasks.input.keys': Object.keys(outcome.inputRequests),
        });
      }
      return inSpan('task.settle', {}, (span) =>
        settled(outcome.kind)(
          span,
          settler.afterLastStep(fence, outcome, statusMessage, toolVersion, trx),
        ),
      );
    },
    afterError: (fence, task, error) =>
      inSpan('task.settle', {}, (span) =>
        settled('error')(span, settler.afterError(fence, task, error)),
      ),
  };
}
