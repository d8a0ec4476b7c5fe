import { performance } from 'node:perf_hooks';
import {
  saveCheckpoint,
  type BatchedLeaseWrites,
  type Db,
  type Fence,
  type StepTransactionHandle,
} from '@mcp-tasks/store';
import type { JsonObject, JsonValue, Task } from '@mcp-tasks/tasks';
import type { StepOutcome, TaskProgram, ToolSettings } from '@mcp-tasks/tools';
import type { AttemptCancellation } from './cancellation.js';
import type { AbortReason } from './held-tasks.js';
import type { LeaseKeeper } from './lease-keeper.js';
import type { JobOutcome, WorkerMetrics } from '../metrics.js';
import type { LastStepOutcome, OutcomeSettler } from './settle-outcome.js';
import { LEASE_EXPIRED_OUTCOME, type StepExecution, type StepLog } from './step-log.js';
import { openStepEffects, type StepEffects } from './step-transaction.js';
import { inSpan } from './attempt-trace.js';
import { ToolStepError } from './tool-step-error.js';

/** One attempt at the steps of a task whose tool, arguments and starting state are settled. */
export interface StepLoopAttempt {
  fence: Fence;
  task: Task;
  program: TaskProgram<JsonObject>;
  args: JsonObject;
  /** The state to run from and the tool version that writes the checkpoints. */
  starting: { state: JsonValue; version: number };
  /** Step outcomes the task had saved at the claim: the index of the first step to run. */
  stepsSaved: number;
  signal: AbortSignal;
  lease: LeaseKeeper;
  cancellation: AttemptCancellation;
  /** Drops the task from the held set just before the attempt's last write (see task-runner). */
  letGo: () => void;
}

export interface StepLoopOptions {
  db: Db;
  /** Checkpoints outside a step's transaction share statements with other tasks' (batched). */
  leaseWrites: BatchedLeaseWrites;
  leaseMs: number;
  settings: ToolSettings;
  isDraining(): boolean;
  metrics: WorkerMetrics;
  stepLog?: StepLog;
  settle: OutcomeSettler;
  /** OpenTelemetry is on: each step and checkpoint is a span of the attempt. */
  tracing?: boolean;
}

/**
 * Runs steps until one ends the attempt, checkpointing each `continue`. Before each step it stops
 * for an abort, a drain, a cancel a checkpoint reported, or a lease it can no longer vouch for;
 * after each it judges the lease again before anything of the step is logged or written. A step
 * that throws ends in a ToolStepError (the caller settles it); our own write errors pass through.
 */
export function createStepLoop(
  options: StepLoopOptions,
): (attempt: StepLoopAttempt) => Promise<JobOutcome> {
  const { db, leaseMs, settle } = options;
  return async (attempt) => {
    const { fence, signal, lease, cancellation } = attempt;
    const steps = new AttemptSteps(options, attempt);
    // Each step starts on a lease just granted or renewed, with the cancel flag just read: the
    // claim did both for the first step (a cancel it saw was settled before), each checkpoint
    // does both for the next. So a step costs no renewal of its own; longer steps are renewed
    // by the lease keeper, whose first renewal comes a third of a lease after the claim.
    for (;;) {
      const stop = steps.reasonToStopBeforeStep();
      if (stop !== undefined) return await settle.afterAbort(fence, stop);
      let outcome;
      let thrown: { error: unknown } | undefined;
      // The step's own transaction, if it asks for one: idle past a lease, it is rolled back.
      const effects = openStepEffects(db, fence, leaseMs);
      try {
        outcome = await steps.runStep(effects);
      } catch (error) {
        thrown = { error };
      }
      steps.recordStepEnd(outcome);
      const failed = effects.failure();
      if (failed !== undefined) {
        // Nothing of the step was written. A fence that no longer held is a lost lease; an
        // outage is ours (afterError gives the lease back); the tool's own error is the task's.
        if (failed.by === 'ours') throw failed.error;
        return await settle.afterAbort(fence, steps.abortReasonOrStepError(failed));
      }
      // Nothing of a step that threw, returned nothing or lost its lease is kept. The abort of a
      // lost lease is final, so after the rollback it is still the signal's reason.
      if (thrown !== undefined || outcome === undefined || leaseLostDuringStep(signal)) {
        await effects.rollback();
        return await settle.afterAbort(fence, steps.abortReasonOrStepError(thrown));
      }

      // With a transaction, the outcome's fenced write joins it and the commit is the step's
      // end: a StaleLeaseError from that write (another worker claimed) rolls back everything.
      const trx = effects.handle();
      try {
        if (outcome.kind !== 'continue') {
          attempt.letGo();
          const ended = await steps.settleLastStep(outcome, trx);
          await effects.commit();
          return ended;
        }
        // Saved even when a cancel or shutdown is pending: the progress is kept either way.
        // The checkpoint renews the lease, so its send time moves the local deadline too.
        const checkpointSentAt = performance.now();
        const saved = await steps.saveCheckpoint(outcome, trx);
        await effects.commit();
        cancellation.answeredByCheckpoint(saved);
        lease.confirmed(checkpointSentAt);
      } catch (error) {
        await effects.rollback();
        throw error;
      }
      steps.advance(outcome.state);
    }
  };
}

/** A lease the keeper lost or could not confirm while the step ran: its outcome is not written. */
function leaseLostDuringStep(signal: AbortSignal): boolean {
  const reason = signal.aborted ? (signal.reason as AbortReason) : undefined;
  return reason === 'lease lost' || reason === 'lease unconfirmed';
}

/**
 * Where one attempt's steps stand (the state to run from, its index, the status message) and the
 * current step's start. One per attempt; its methods are the step loop's parts that never await.
 */
class AttemptSteps {
  private readonly toolName: string;
  private state: JsonValue;
  private stepIndex: number;
  private statusMessage: Task['statusMessage'];
  private started = 0;
  private execution: StepExecution | undefined;

  constructor(
    private readonly options: StepLoopOptions,
    private readonly attempt: StepLoopAttempt,
  ) {
    this.toolName = attempt.task.operation.toolName;
    this.state = attempt.starting.state;
    this.stepIndex = attempt.stepsSaved;
    this.statusMessage = attempt.task.statusMessage;
  }

  /** The abort that stops the attempt before its next step, if any; else the start is logged. */
  reasonToStopBeforeStep(): AbortReason | undefined {
    const { fence, task, signal, lease } = this.attempt;
    if (signal.aborted) return signal.reason as AbortReason;
    if (this.options.isDraining()) return 'shutdown';
    if (this.attempt.cancellation.requestedAtCheckpoint()) return 'cancel';
    // One instant for the lease check and the logged start: a stall between them is the
    // step's tail, past its deadline, and is judged as such when the step ends.
    const started = performance.now();
    this.started = started;
    if (!lease.stillHeld(started)) return 'lease unconfirmed';
    this.execution = this.options.stepLog?.started(
      fence,
      this.state,
      Object.keys(task.inputResponses),
      started,
    );
    return undefined;
  }

  /** Runs the tool's step, in a `task.step` span when tracing is on. */
  runStep(effects: StepEffects): Promise<StepOutcome> {
    const { task, program, args, signal } = this.attempt;
    const { state, stepIndex, options } = this;
    const runStep = () =>
      program.step(state, args, {
        taskId: task.id,
        stepIndex,
        idempotencyKey: `${task.id}:${stepIndex}`,
        signal,
        inputResponses: task.inputResponses,
        settings: options.settings,
        transaction: effects.transaction,
      });
    return options.tracing
      ? inSpan('task.step', { 'mcp_tasks.step.index': stepIndex }, async (span) => {
          const stepOutcome = await runStep();
          span.setAttribute('mcp_tasks.step.outcome', stepOutcome?.kind ?? 'none');
          return stepOutcome;
        })
      : runStep();
  }

  /** Logs and counts the step that just ended (`outcome` undefined: it threw). */
  recordStepEnd(outcome: StepOutcome | undefined): void {
    const { lease } = this.attempt;
    const { metrics } = this.options;
    const { toolName } = this;
    // Judged before the step's end is logged or anything of it written (see stillHeld):
    // past the local lease deadline, another worker may be running this step by now.
    const endedAt = performance.now();
    const held = lease.stillHeld(endedAt);
    this.execution?.ended(held ? (outcome?.kind ?? 'threw') : LEASE_EXPIRED_OUTCOME, {
      endedAt,
      leaseDeadline: lease.deadline(),
    });
    metrics.steps.inc({ tool: toolName });
    metrics.stepDuration.observe({ tool: toolName }, (endedAt - this.started) / 1_000);
  }

  /** The abort that explains a failed step; else its failure, thrown as a ToolStepError. */
  abortReasonOrStepError(thrown: { error: unknown } | undefined): AbortReason {
    const { signal } = this.attempt;
    if (signal.aborted) return signal.reason as AbortReason;
    throw new ToolStepError(
      thrown === undefined ? new Error(`${this.toolName} step returned nothing`) : thrown.error,
    );
  }

  /** The last write of an attempt whose step ended it (`complete`, input required, …). */
  settleLastStep(
    outcome: LastStepOutcome,
    trx: StepTransactionHandle | undefined,
  ): Promise<JobOutcome> {
    const { fence, starting } = this.attempt;
    return this.options.settle.afterLastStep(
      fence,
      outcome,
      this.statusMessage,
      starting.version,
      trx,
    );
  }

  /** Saves a `continue`'s checkpoint (on the step's transaction if it has one), in a span if traced. */
  saveCheckpoint(
    outcome: Extract<StepOutcome, { kind: 'continue' }>,
    trx: StepTransactionHandle | undefined,
  ): ReturnType<typeof saveCheckpoint> {
    const { leaseWrites, leaseMs, tracing } = this.options;
    const { fence, starting } = this.attempt;
    this.statusMessage = outcome.statusMessage ?? this.statusMessage;
    const statusMessage = this.statusMessage;
    const checkpointState = outcome.state;
    const toolVersion = starting.version;
    // On the step's transaction it commits with the step; otherwise it may share a statement
    // with other tasks' checkpoints, and resolves only once that statement committed.
    const save = () =>
      trx === undefined
        ? leaseWrites.saveCheckpoint(fence, checkpointState, statusMessage, { toolVersion })
        : saveCheckpoint(trx, fence, checkpointState, statusMessage, { toolVersion, leaseMs });
    return tracing
      ? inSpan('task.checkpoint', { 'mcp_tasks.step.index': this.stepIndex }, save)
      : save();
  }

  /** The checkpoint is saved: the next step runs from its state. */
  advance(state: JsonValue): void {
    this.state = state;
    this.stepIndex += 1;
  }
}
