import { performance } from 'node:perf_hooks';
import { context } from '@opentelemetry/api';
import { ErrorCode, ProtocolError } from '@mcp-tasks/protocol';
import {
  StaleLeaseError,
  createBatchedLeaseWrites,
  type BatchedLeaseWrites,
  failTask,
  isClaimable,
  type Db,
  type Fence,
  type ToolRecord,
} from '@mcp-tasks/store';
import type { Task } from '@mcp-tasks/tasks';
import type { ToolCatalogue, ToolSettings } from '@mcp-tasks/tools';
import { startAttemptTrace, traceSettler } from './attempt-trace.js';
import { trackCancellation, type AttemptCancellation } from './cancellation.js';
import { abortWith, type HeldTasks } from './held-tasks.js';
import { startLeaseKeeper, type LeaseKeeper } from './lease-keeper.js';
import type { Logger } from '../logger.js';
import type { JobOutcome, WorkerMetrics } from '../metrics.js';
import type { WakeAgain } from './wake-again.js';
import { budgetSpentAtClaim, type RetryPolicy } from './retry-policy.js';
import { createOutcomeSettler, type OutcomeSettler } from './settle-outcome.js';
import { createStepLoop } from './step-loop.js';
import type { StepLog } from './step-log.js';
import { DEFAULT_TOOL_MISSING_FAIL_AFTER_MS, createToolMismatchHandler } from './tool-mismatch.js';
import { startingState } from './tool-state.js';

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
  wakeAgain: WakeAgain;
  logger: Logger;
  metrics: WorkerMetrics;
  /** STEP_LOG=on: a log line at each step's start and end (see step-log.ts). */
  stepLog?: StepLog;
  /** How long a task whose tool no worker has is left for others before it fails (default 5 min). */
  toolMissingFailAfterMs?: number;
  /** OpenTelemetry is on: each attempt of a traced task is a span (attempt-trace.ts). */
  tracing?: boolean;
}

export interface TaskRunner {
  /**
   * One attempt for a wake-up: at the task it names, or at the fairest waiting task instead
   * (claimFairly in the store). Never throws for the task's own failures; infrastructure errors
   * propagate, after `onClaimed` has said which task the attempt held, if any.
   */
  run(taskId: string, onClaimed?: (claimedTaskId: string) => void): Promise<JobOutcome>;
}

/** What one runner's attempts share: its options and the parts built once for it. */
interface RunnerParts {
  options: TaskRunnerOptions;
  leaseWrites: BatchedLeaseWrites;
  settle: OutcomeSettler;
  leaveForAnotherWorker: ReturnType<typeof createToolMismatchHandler>;
  runSteps: ReturnType<typeof createStepLoop>;
}

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
    wakeAgain: options.wakeAgain,
    logger,
    metrics,
    failAfterMs: options.toolMissingFailAfterMs ?? DEFAULT_TOOL_MISSING_FAIL_AFTER_MS,
    retryDelayMs: options.retry.maxDelayMs,
  });
  // Claims and last writes of this worker's tasks share statements when they arrive together.
  const leaseWrites = createBatchedLeaseWrites({ db, workerId: options.workerId, leaseMs });
  const settler = createOutcomeSettler({
    db,
    leaseWrites,
    leaseMs,
    retry: options.retry,
    wakeAgain: options.wakeAgain,
    logger,
    metrics,
  });
  const settle = options.tracing === true ? traceSettler(settler) : settler;
  const runSteps = createStepLoop({
    leaseWrites,
    db,
    leaseMs,
    settings: options.settings,
    isDraining: () => options.isDraining(),
    metrics,
    stepLog: options.stepLog,
    settle,
    tracing: options.tracing,
  });
  const parts: RunnerParts = { options, leaseWrites, settle, leaveForAnotherWorker, runSteps };

  return {
    run: (wakeUpTaskId, onClaimed) => claimAndRun(parts, wakeUpTaskId, onClaimed),
  };
}

/**
 * Settles what the claim already decides (a cancel, a spent budget), finds the tool and the
 * state to start from, then runs the steps. `letGo` drops the task from the held set just
 * before the attempt's last write: the change that write notifies is our own, and a cancel or
 * lost lease can no longer change what it does, so the cancel watcher need not re-read the row.
 */
async function execute(
  parts: RunnerParts,
  fence: Fence,
  task: Task,
  toolRecord: ToolRecord,
  stepsSaved: number,
  signal: AbortSignal,
  letGo: () => void,
  lease: LeaseKeeper,
  cancellation: AttemptCancellation,
): Promise<JobOutcome> {
  const { options, settle, leaveForAnotherWorker, runSteps } = parts;
  const { db, logger } = options;
  if (cancellation.requestedAtClaim) return await settle.afterAbort(fence, 'cancel');
  const spent = budgetSpentAtClaim(task.failures, options.retry);
  if (spent !== null) {
    logger.error({ taskId: task.id, failures: task.failures }, 'crash loop: giving up on task');
    await failTask(db, fence, spent, `Failed: ${spent.message}`);
    return 'failed';
  }
  const toolName = task.operation.toolName;
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
    return await runSteps({
      fence,
      task,
      program,
      args,
      starting,
      stepsSaved,
      signal,
      lease,
      cancellation,
      letGo,
    });
  } catch (error) {
    return await settle.afterError(fence, task, error);
  }
}

/**
 * How soon a wake-up whose task was locked by another writer is sent again: those writes (a
 * listen flag, a cancel request, a wake-up mark) are single short statements.
 */
const PASSED_OVER_DELAY_MS = 100;

/**
 * A wake-up that claimed nothing. Usually its task is held or over (a duplicate wake-up, or the
 * fair claim gave it to another wake-up). But the fair claim skips locked rows, so a task whose
 * row another writer held at that instant is passed over and, without this, waits for the
 * sweeper's wake-up grace: if it is still claimable, it is woken again.
 */
async function afterNothingClaimed(
  options: TaskRunnerOptions,
  wakeUpTaskId: string,
): Promise<JobOutcome> {
  if (!(await isClaimable(options.db, wakeUpTaskId))) return 'skipped';
  await options.wakeAgain(wakeUpTaskId, 'retry', PASSED_OVER_DELAY_MS, { mark: false });
  return 'passed_over';
}

/** `TaskRunner.run`: claims, holds the lease while the attempt runs, and lets go after it. */
async function claimAndRun(
  parts: RunnerParts,
  wakeUpTaskId: string,
  onClaimed: ((claimedTaskId: string) => void) | undefined,
): Promise<JobOutcome> {
  const { options, leaseWrites } = parts;
  const { db, logger, metrics } = options;
  // A wake-up fetched just as shutdown began: claiming would bump the epoch and spend an
  // attempt only to release at once. Pass the wake-up on to another worker instead.
  const pickedUpAt = performance.now();
  if (options.isDraining()) {
    await options.wakeAgain(wakeUpTaskId, 'released', 0);
    return 'released';
  }
  const claimSentAt = performance.now();
  const claim = await leaseWrites.claim(wakeUpTaskId);
  if (claim === null) return await afterNothingClaimed(options, wakeUpTaskId);
  const attemptTrace =
    options.tracing === true
      ? await startAttemptTrace(
          db,
          claim,
          { taskId: wakeUpTaskId, workerId: options.workerId },
          { pickedUpAt, claimSentAt, claimedAt: performance.now() },
        )
      : undefined;
  const { fence, task, tool: toolRecord } = claim;
  const taskId = fence.taskId;
  metrics.claims.inc({ task: taskId === wakeUpTaskId ? 'named' : 'fairer' });
  onClaimed?.(taskId);
  const controller = new AbortController();
  const cancellation = trackCancellation(task, controller);
  const unregister = options.heldTasks.add(fence, controller);
  metrics.heldTasks.set(options.heldTasks.size());
  const keeper = keepLease(options, fence, claimSentAt, cancellation, controller);
  // No child logger per attempt: its fields are built only for a line that is written.
  const debug = logger.isLevelEnabled('debug');
  const fields = () => ({ taskId, epoch: fence.epoch, tool: task.operation.toolName });
  if (debug) logger.debug({ ...fields(), attempt: task.attempts }, 'claimed task');
  try {
    const runAttempt = () =>
      execute(
        parts,
        fence,
        task,
        toolRecord,
        claim.stepsSaved,
        controller.signal,
        unregister,
        keeper,
        cancellation,
      );
    const outcome = await (attemptTrace === undefined
      ? runAttempt()
      : context.with(attemptTrace.context, runAttempt));
    attemptTrace?.end(outcome);
    if (debug) logger.debug({ ...fields(), outcome }, 'attempt ended');
    return outcome;
  } catch (error) {
    if (error instanceof StaleLeaseError) {
      attemptTrace?.end('lease_lost');
      metrics.leasesLost.inc();
      logger.info(fields(), 'lease superseded; stopped without further writes');
      return 'lease_lost';
    }
    attemptTrace?.fail(error);
    throw error;
  } finally {
    keeper.stop();
    unregister();
    metrics.heldTasks.set(options.heldTasks.size());
  }
}

/** The attempt's lease keeper: a cancel it hears is reported, a lease it loses aborts the attempt. */
function keepLease(
  options: TaskRunnerOptions,
  fence: Fence,
  claimSentAt: number,
  cancellation: AttemptCancellation,
  controller: AbortController,
): LeaseKeeper {
  const { db, leaseMs, logger } = options;
  return startLeaseKeeper({
    db,
    fence,
    leaseMs,
    logger,
    heldSince: claimSentAt,
    onCancelRequested: () => cancellation.reportedByRenewal(),
    onLeaseLost: () => abortWith(controller, 'lease lost'),
    onLeaseUnconfirmed: () => abortWith(controller, 'lease unconfirmed'),
  });
}
