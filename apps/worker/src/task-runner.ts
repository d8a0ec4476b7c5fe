import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode, ProtocolError } from '@mcp-tasks/protocol';
import {
  CANCELLED_BY_REQUEST,
  StaleLeaseError,
  claimLease,
  completeTask,
  failTask,
  markCancelled,
  recordAttemptFailure,
  releaseLease,
  requestInput,
  saveCheckpoint,
  type Db,
  type Fence,
  type ToolRecord,
} from '@mcp-tasks/store';
import type { JsonObject, JsonValue, Task, TaskError } from '@mcp-tasks/tasks';
import type { ToolCatalogue, ToolSettings } from '@mcp-tasks/tools';
import { abortWith, type AbortReason, type HeldTasks } from './held-tasks.js';
import { startLeaseKeeper, type LeaseKeeper } from './lease-keeper.js';
import type { Logger } from './logger.js';
import type { JobOutcome, WorkerMetrics } from './metrics.js';
import type { Requeue } from './requeue.js';
import { LEASE_EXPIRED_OUTCOME, type StepLog } from './step-log.js';
import { DEFAULT_TOOL_MISSING_FAIL_AFTER_MS, createToolMismatchHandler } from './tool-mismatch.js';
import { startingState } from './tool-state.js';
import {
  budgetSpentAtClaim,
  decideAfterUnexpectedError,
  isTransientInfrastructureError,
  type RetryPolicy,
} from './retry-policy.js';

/** The final status message when a tool names none: the last progress line would be stale. */
const COMPLETED_MESSAGE = 'Completed.';

export interface TaskRunnerOptions {
  db: Db;
  catalogue: ToolCatalogue;
  workerId: string;
  leaseMs: number;
  retry: RetryPolicy;
  settings: ToolSettings;
  heldTasks: HeldTasks;
  /** True once shutdown began: stop each task at its next checkpoint and give it back. */
  isDraining(): boolean;
  /** Sends the task another wake-up and marks it enqueued (a retry after backoff, or a task given back at shutdown). */
  requeue: Requeue;
  logger: Logger;
  metrics: WorkerMetrics;
  /** STEP_LOG=on: a log line at each step's start and end (see step-log.ts). */
  stepLog?: StepLog;
  /** How long a task whose tool no worker has is left for others before it fails (default 5 min). */
  toolMissingFailAfterMs?: number;
}

export interface TaskRunner {
  /** One attempt at a task. Never throws for the task's own failures; infrastructure errors propagate. */
  run(taskId: string): Promise<JobOutcome>;
}

/** How often a lease is offered back while Postgres is unreachable. */
const RELEASE_RETRY_MS = 250;
/** The shortest time a lease is offered back after an outage; longer leases get 3 lease periods. */
const MIN_RELEASE_WINDOW_MS = 30_000;

const protocolErrorToTaskError = (error: ProtocolError): TaskError => {
  const wire = error.toJsonRpcError();
  return wire.data === undefined
    ? { code: wire.code, message: wire.message }
    : { code: wire.code, message: wire.message, data: wire.data as JsonValue };
};

/**
 * Runs a task step by step under a lease. Every write carries the fence, so once another worker
 * has claimed (or the task ended), our writes are rejected with StaleLeaseError and this attempt
 * stops without writing anything more.
 */
export function createTaskRunner(options: TaskRunnerOptions): TaskRunner {
  const { db, leaseMs, logger, metrics } = options;
  const leaveForAnotherWorker = createToolMismatchHandler({
    db,
    workerId: options.workerId,
    requeue: options.requeue,
    logger,
    metrics,
    failAfterMs: options.toolMissingFailAfterMs ?? DEFAULT_TOOL_MISSING_FAIL_AFTER_MS,
    retryDelayMs: options.retry.maxDelayMs,
  });
  const releaseWindowMs = Math.max(MIN_RELEASE_WINDOW_MS, 3 * leaseMs);

  async function settleAbort(fence: Fence, reason: AbortReason): Promise<JobOutcome> {
    switch (reason) {
      case 'lease lost':
        metrics.leasesLost.inc();
        return 'lease_lost';
      case 'lease unconfirmed': {
        // Most likely nobody claimed (Postgres was out for everyone): give the lease back as soon
        // as Postgres answers, so the next claim is no takeover and costs the task nothing.
        const returned = await giveBackAfterOutage(fence);
        if (returned === 'superseded') {
          metrics.leasesLost.inc();
          return 'lease_lost';
        }
        await options
          .requeue(fence.taskId, 'retry', returned === 'released' ? 0 : leaseMs)
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
        await markCancelled(db, fence, CANCELLED_BY_REQUEST);
        return 'cancelled';
      case 'shutdown':
        await releaseLease(db, fence);
        await options.requeue(fence.taskId, 'released', 0).catch((error: unknown) => {
          logger.warn(
            { err: error, taskId: fence.taskId },
            'could not requeue a released task; the sweeper will',
          );
        });
        return 'released';
    }
  }

  async function handleUnexpected(fence: Fence, task: Task, error: unknown): Promise<JobOutcome> {
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
      await failTask(db, fence, decision.error, `Failed: ${decision.error.message}`);
      return 'failed';
    }
    await recordAttemptFailure(db, fence, message);
    await options.requeue(task.id, 'retry', decision.delayMs).catch((requeueError: unknown) => {
      logger.warn(
        { err: requeueError, taskId: task.id },
        'could not schedule a retry; the sweeper will',
      );
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
    fence: Fence,
  ): Promise<'released' | 'superseded' | 'unreachable'> {
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

  /**
   * `letGo` drops the task from the held set just before the attempt's last write: the change
   * that write notifies is our own, and a cancel or lost lease can no longer change what it does,
   * so the cancel watcher need not re-read the row for it.
   */
  async function execute(
    fence: Fence,
    task: Task,
    toolRecord: ToolRecord,
    signal: AbortSignal,
    letGo: () => void,
    lease: LeaseKeeper,
  ): Promise<JobOutcome> {
    if (task.cancelRequestedAt !== null) {
      await markCancelled(db, fence, CANCELLED_BY_REQUEST);
      return 'cancelled';
    }
    const spent = budgetSpentAtClaim(task.failures, options.retry);
    if (spent !== null) {
      logger.error({ taskId: task.id, failures: task.failures }, 'crash loop: giving up on task');
      await failTask(db, fence, spent, `Failed: ${spent.message}`);
      return 'failed';
    }
    const toolName = task.operation.toolName;
    // Set when the tool's own step threw: its errors are the task's, whatever their code.
    let stepThrew = false;
    try {
      const tool = options.catalogue.get(toolName);
      // Not the task's fault: another worker (other packs or modules, newer release) may have it.
      if (tool?.task === undefined)
        return await leaveForAnotherWorker(fence, task, { reason: 'missing' });
      const program = tool.task;
      const parsed = tool.arguments.safeParse(task.operation.arguments);
      if (!parsed.success) {
        throw new ProtocolError(ErrorCode.InvalidParams, `invalid arguments for ${toolName}`, {
          issues: parsed.error.issues.map((issue) => issue.message),
        });
      }
      const args = parsed.data;
      const starting = await startingState(
        db,
        fence,
        task,
        toolRecord,
        { ...tool, task: program },
        args,
        logger,
      );
      if (starting.kind === 'failed') return 'failed';
      if (starting.kind === 'mismatch')
        return await leaveForAnotherWorker(fence, task, starting.mismatch);
      let state: JsonValue = starting.state;
      let statusMessage = task.statusMessage;
      // Each step starts on a lease just granted or renewed, with the cancel flag just read: the
      // claim did both for the first step (a cancel it saw was settled above), each checkpoint
      // does both for the next. So a step costs no renewal of its own; longer steps are renewed
      // by the lease keeper, whose first renewal comes a third of a lease after the claim.
      let cancelRequested = false;

      for (;;) {
        if (signal.aborted) return await settleAbort(fence, signal.reason as AbortReason);
        if (options.isDraining()) return await settleAbort(fence, 'shutdown');
        if (cancelRequested) return await settleAbort(fence, 'cancel');
        if (!lease.stillHeld()) return await settleAbort(fence, 'lease unconfirmed');

        const started = performance.now();
        const execution = options.stepLog?.started(fence, state, Object.keys(task.inputResponses));
        let outcome;
        let thrown: { error: unknown } | undefined;
        try {
          outcome = await program.step(state, args, {
            taskId: task.id,
            signal,
            inputResponses: task.inputResponses,
            settings: options.settings,
          });
        } catch (error) {
          thrown = { error };
        }
        // Judged before the step's end is logged or anything of it written (see stillHeld):
        // past the local lease deadline, another worker may be running this step by now.
        const endedAt = performance.now();
        const held = lease.stillHeld(endedAt);
        execution?.ended(held ? (outcome?.kind ?? 'threw') : LEASE_EXPIRED_OUTCOME, {
          endedAt,
          leaseDeadline: lease.deadline(),
        });
        metrics.steps.inc({ tool: toolName });
        metrics.stepDuration.observe({ tool: toolName }, (endedAt - started) / 1_000);
        if (thrown !== undefined || outcome === undefined) {
          if (signal.aborted) return await settleAbort(fence, signal.reason as AbortReason);
          stepThrew = true;
          throw thrown === undefined
            ? new Error(`${toolName} step returned nothing`)
            : thrown.error;
        }
        const reason = signal.aborted ? (signal.reason as AbortReason) : undefined;
        if (reason === 'lease lost' || reason === 'lease unconfirmed')
          return await settleAbort(fence, reason);

        switch (outcome.kind) {
          case 'continue': {
            statusMessage = outcome.statusMessage ?? statusMessage;
            // Saved even when a cancel or shutdown is pending: the progress is kept either way.
            // The checkpoint renews the lease, so its send time moves the local deadline too.
            const checkpointSentAt = performance.now();
            ({ cancelRequested } = await saveCheckpoint(db, fence, outcome.state, statusMessage, {
              toolVersion: starting.version,
              leaseMs,
            }));
            lease.confirmed(checkpointSentAt);
            state = outcome.state;
            continue;
          }
          case 'input':
            letGo();
            await requestInput(
              db,
              fence,
              outcome.inputRequests,
              outcome.state,
              outcome.statusMessage ?? statusMessage,
              { toolVersion: starting.version },
            );
            return 'input_required';
          case 'complete':
            letGo();
            // A finished result beats a pending cancel (R18: the task may still complete).
            await completeTask(
              db,
              fence,
              outcome.result as unknown as JsonObject,
              outcome.statusMessage ?? COMPLETED_MESSAGE,
            );
            return 'completed';
          case 'cancel':
            letGo();
            await markCancelled(db, fence, outcome.statusMessage);
            return 'cancelled';
        }
      }
    } catch (error) {
      if (error instanceof StaleLeaseError) throw error;
      if (!stepThrew && isTransientInfrastructureError(error)) {
        // Our own write (renewal, checkpoint) hit an outage, which says nothing about the task:
        // give the lease back, so the next claim is no takeover (that would count as a failure),
        // and let the job handler send the wake-up again. If Postgres is down this release fails
        // too, and the lease simply runs out.
        await giveBackAfterOutage(fence);
        throw error;
      }
      if (error instanceof ProtocolError) {
        await failTask(db, fence, protocolErrorToTaskError(error), `Failed: ${error.message}`);
        return 'failed';
      }
      return await handleUnexpected(fence, task, error);
    }
  }

  return {
    async run(taskId) {
      // A wake-up fetched just as shutdown began: claiming would bump the epoch and spend an
      // attempt only to release at once. Pass the wake-up on to another worker instead.
      if (options.isDraining()) {
        await options.requeue(taskId, 'released', 0);
        return 'released';
      }
      const claimSentAt = performance.now();
      const claim = await claimLease(db, taskId, options.workerId, leaseMs);
      if (claim === null) return 'skipped';
      const { fence, task, tool: toolRecord } = claim;
      const controller = new AbortController();
      const unregister = options.heldTasks.add(fence, controller);
      metrics.heldTasks.set(options.heldTasks.size());
      const keeper = startLeaseKeeper({
        db,
        fence,
        leaseMs,
        logger,
        heldSince: claimSentAt,
        onCancelRequested: () => abortWith(controller, 'cancel'),
        onLeaseLost: () => abortWith(controller, 'lease lost'),
        onLeaseUnconfirmed: () => abortWith(controller, 'lease unconfirmed'),
      });
      // No child logger per attempt: its fields are built only for a line that is written.
      const debug = logger.isLevelEnabled('debug');
      const fields = () => ({ taskId, epoch: fence.epoch, tool: task.operation.toolName });
      if (debug) logger.debug({ ...fields(), attempt: task.attempts }, 'claimed task');
      try {
        const outcome = await execute(
          fence,
          task,
          toolRecord,
          controller.signal,
          unregister,
          keeper,
        );
        if (debug) logger.debug({ ...fields(), outcome }, 'attempt ended');
        return outcome;
      } catch (error) {
        if (error instanceof StaleLeaseError) {
          metrics.leasesLost.inc();
          logger.info(fields(), 'lease superseded; stopped without further writes');
          return 'lease_lost';
        }
        throw error;
      } finally {
        keeper.stop();
        unregister();
        metrics.heldTasks.set(options.heldTasks.size());
      }
    },
  };
}
