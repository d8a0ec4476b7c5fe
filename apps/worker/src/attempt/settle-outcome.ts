import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProtocolError } from '@mcp-tasks/protocol';
import {
  CANCELLED_BY_REQUEST,
  StaleLeaseError,
  isTransientInfrastructureError,
  recordAttemptFailure,
  releaseLease,
  requestInput,
  type BatchedLeaseWrites,
  type Db,
  type Fence,
  type FinalWrite,
  writeFinal as writeFinalNow,
} from '@mcp-tasks/store';
import type { JsonObject, JsonValue, Task, TaskError } from '@mcp-tasks/tasks';
import type { StepOutcome } from '@mcp-tasks/tools';
import type { AbortReason } from './held-tasks.js';
import type { Logger } from '../logger.js';
import type { JobOutcome, WorkerMetrics } from '../metrics.js';
import { wakeAgainOrLeaveToSweeper, type WakeAgain } from './wake-again.js';
import { decideAfterUnexpectedError, type RetryPolicy } from './retry-policy.js';
import { ToolStepError } from './tool-step-error.js';

/** The final status message when a tool names none: the last progress line would be stale. */
const COMPLETED_MESSAGE = 'Completed.';

/** How often a lease is offered back while Postgres is unreachable. */
const RELEASE_RETRY_MS = 250;
/** The shortest time a lease is offered back after an outage; longer leases get 3 lease periods. */
const MIN_RELEASE_WINDOW_MS = 30_000;

/** A step's answer that ends the attempt (a `continue` is checkpointed by the step loop). */
export type LastStepOutcome = Exclude<StepOutcome, { kind: 'continue' }>;

export interface OutcomeSettler {
  /** The attempt stops for `reason` (a cancel, a lost or unconfirmed lease, shutdown). */
  afterAbort(fence: Fence, reason: AbortReason): Promise<JobOutcome>;
  /**
   * Writes the step's last answer: park for input, complete, or the tool's own cancel. With the
   * step's transaction (`trx`), the write joins it (its own statement, never batched with other
   * tasks') and the caller commits.
   */
  afterLastStep(
    fence: Fence,
    outcome: LastStepOutcome,
    statusMessage: string | null,
    toolVersion: number,
    trx?: Db,
  ): Promise<JobOutcome>;
  /**
   * An error ended the attempt. A StaleLeaseError, or an outage hit by our own writes (after the
   * lease is given back), is thrown on; everything else is the task's, settled failed or retried.
   */
  afterError(fence: Fence, task: Task, error: unknown): Promise<JobOutcome>;
}

const protocolErrorToTaskError = (error: ProtocolError): TaskError => {
  const wire = error.toJsonRpcError();
  return wire.data === undefined
    ? { code: wire.code, message: wire.message }
    : { code: wire.code, message: wire.message, data: wire.data as JsonValue };
};

interface OutcomeSettlerOptions {
  db: Db;
  /** Completions, failures and cancels go through it, so those that finish together share a statement. */
  leaseWrites: BatchedLeaseWrites;
  leaseMs: number;
  retry: RetryPolicy;
  wakeAgain: WakeAgain;
  logger: Logger;
  metrics: WorkerMetrics;
}

/** What one settler's writes share: its options and what is derived from them once. */
interface SettlerParts {
  options: OutcomeSettlerOptions;
  db: Db;
  leaseMs: number;
  logger: Logger;
  metrics: WorkerMetrics;
  writeFinal: (fence: Fence, write: FinalWrite) => Promise<void>;
  releaseWindowMs: number;
}

/** The last write of an attempt, for each way it can end. Every write carries the fence. */
export function createOutcomeSettler(options: OutcomeSettlerOptions): OutcomeSettler {
  const { db, leaseMs, logger, metrics } = options;
  const writeFinal = (fence: Fence, write: FinalWrite) =>
    options.leaseWrites.writeFinal(fence, write);
  const releaseWindowMs = Math.max(MIN_RELEASE_WINDOW_MS, 3 * leaseMs);

  const parts: SettlerParts = {
    options,
    db,
    leaseMs,
    logger,
    metrics,
    writeFinal,
    releaseWindowMs,
  };
  return {
    afterAbort: (fence, reason) => afterAbort(parts, fence, reason),
    afterLastStep: (fence, outcome, statusMessage, toolVersion, trx) =>
      afterLastStep(parts, fence, outcome, statusMessage, toolVersion, trx),
    afterError: (fence, task, error) => afterError(parts, fence, task, error),
  };
}

async function afterAbort(
  parts: SettlerParts,
  fence: Fence,
  reason: AbortReason,
): Promise<JobOutcome> {
  const { db, leaseMs, logger, metrics, options, writeFinal } = parts;
  switch (reason) {
    case 'lease lost':
      metrics.leasesLost.inc();
      return 'lease_lost';
    case 'lease unconfirmed': {
      // Most likely nobody claimed (Postgres was out for everyone): give the lease back as soon
      // as Postgres answers, so the next claim is no takeover and costs the task nothing.
      const returned = await giveBackAfterOutage(parts, fence);
      if (returned === 'superseded') {
        metrics.leasesLost.inc();
        return 'lease_lost';
      }
      await options
        .wakeAgain(fence.taskId, 'retry', returned === 'released' ? 0 : leaseMs)
        .catch((error: unknown) => {
          logger.warn(
            { err: error, taskId: fence.taskId },
            'could not requeue after an outage; the sweeper will',
          );
        });
      return 'outage';
    }
    case 'cancel':
      // Completion may have won meanwhile; then this write loses (StaleLeaseError) and that is fine.
      await writeFinal(fence, { status: 'cancelled', statusMessage: CANCELLED_BY_REQUEST });
      return 'cancelled';
    case 'shutdown':
      await releaseLease(db, fence);
      await wakeAgainOrLeaveToSweeper(options.wakeAgain, logger, {
        taskId: fence.taskId,
        reason: 'released',
        delayMs: 0,
        what: 'requeue a released task',
      });
      return 'released';
  }
}

async function afterLastStep(
  parts: SettlerParts,

  fence: Fence,
  outcome: LastStepOutcome,
  statusMessage: string | null,
  toolVersion: number,
  trx?: Db,
): Promise<JobOutcome> {
  const { writeFinal, options } = parts;
  const write = (final: FinalWrite) =>
    trx === undefined ? writeFinal(fence, final) : writeFinalNow(trx, fence, final);
  switch (outcome.kind) {
    case 'input': {
      const message = outcome.statusMessage ?? statusMessage;
      // Outside a step's transaction the pause may share a statement with other tasks' pauses.
      await (trx === undefined
        ? options.leaseWrites.requestInput(fence, outcome.inputRequests, outcome.state, message, {
            toolVersion,
          })
        : requestInput(trx, fence, outcome.inputRequests, outcome.state, message, { toolVersion }));
      return 'input_required';
    }
    case 'complete':
      // A finished result beats a pending cancel (R18: the task may still complete).
      await write({
        status: 'completed',
        result: outcome.result as unknown as JsonObject,
        statusMessage: outcome.statusMessage ?? COMPLETED_MESSAGE,
      });
      return 'completed';
    case 'cancel':
      await write({ status: 'cancelled', statusMessage: outcome.statusMessage });
      return 'cancelled';
  }
}

async function afterError(
  parts: SettlerParts,
  fence: Fence,
  task: Task,
  error: unknown,
): Promise<JobOutcome> {
  const { writeFinal } = parts;
  // The tool's own step threw: its errors are the task's, whatever their code.
  const stepThrew = error instanceof ToolStepError;
  const cause = error instanceof ToolStepError ? error.thrown : error;
  if (cause instanceof StaleLeaseError) throw cause;
  if (!stepThrew && isTransientInfrastructureError(cause)) {
    // Our own write (renewal, checkpoint) hit an outage, which says nothing about the task:
    // give the lease back, so the next claim is no takeover (that would count as a failure),
    // and let the job handler send the wake-up again. If Postgres is down this release fails
    // too, and the lease simply runs out.
    await giveBackAfterOutage(parts, fence);
    throw cause;
  }
  if (cause instanceof ProtocolError) {
    await writeFinal(fence, {
      status: 'failed',
      error: protocolErrorToTaskError(cause),
      statusMessage: `Failed: ${cause.message}`,
    });
    return 'failed';
  }
  return await afterUnexpected(parts, fence, task, cause);
}

async function afterUnexpected(
  parts: SettlerParts,
  fence: Fence,
  task: Task,
  error: unknown,
): Promise<JobOutcome> {
  const { db, logger, options, writeFinal } = parts;
  const message = error instanceof Error ? error.message : String(error);
  // This attempt's number in the retry budget: earlier abnormal ends, plus this one. Clean
  // pauses for input are not failures, so a task with many input rounds keeps its retries.
  const attempt = task.failures + 1;
  const decision = decideAfterUnexpectedError(attempt, options.retry);
  logger.error(
    { err: error, taskId: task.id, attempt, decision: decision.kind },
    'task attempt failed unexpectedly',
  );
  if (decision.kind === 'fail') {
    await writeFinal(fence, {
      status: 'failed',
      error: decision.error,
      statusMessage: `Failed: ${decision.error.message}`,
    });
    return 'failed';
  }
  await recordAttemptFailure(db, fence, message);
  await wakeAgainOrLeaveToSweeper(options.wakeAgain, logger, {
    taskId: task.id,
    reason: 'retry',
    delayMs: decision.delayMs,
    what: 'schedule a retry',
  });
  return 'retry_scheduled';
}

/**
 * Offers the lease back until Postgres answers, for at most the release window: a release that
 * lands before anyone claims keeps the outage from counting as a failure of the task. The pool
 * hands out connections that just died for a moment after an outage; retrying covers that too.
 * `superseded`: someone claimed meanwhile (we were cut off alone, or frozen), nothing to give.
 */
async function giveBackAfterOutage(
  parts: SettlerParts,

  fence: Fence,
): Promise<'released' | 'superseded' | 'unreachable'> {
  const { db, logger, releaseWindowMs } = parts;
  const started = performance.now();
  for (;;) {
    try {
      return (await releaseLease(db, fence)) ? 'released' : 'superseded';
    } catch (releaseError) {
      const elapsed = performance.now() - started;
      if (isTransientInfrastructureError(releaseError) && elapsed < releaseWindowMs) {
        await sleep(RELEASE_RETRY_MS);
        continue;
      }
      logger.warn(
        { err: releaseError, taskId: fence.taskId, elapsedMs: Math.round(elapsed) },
        'could not give the lease back; it will run out and the next claim counts a failure',
      );
      return 'unreachable';
    }
  }
}
