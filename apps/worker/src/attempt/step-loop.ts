import { performance } from 'node:perf_hooks';
import { saveCheckpoint, type Db, type Fence } from '@mcp-tasks/store';
import type { JsonObject, JsonValue, Task } from '@mcp-tasks/tasks';
import type { TaskProgram, ToolSettings } from '@mcp-tasks/tools';
import type { AttemptCancellation } from './cancellation.js';
import type { AbortReason } from './held-tasks.js';
import type { LeaseKeeper } from './lease-keeper.js';
import type { JobOutcome, WorkerMetrics } from '../metrics.js';
import type { OutcomeSettler } from './settle-outcome.js';
import { LEASE_EXPIRED_OUTCOME, type StepLog } from './step-log.js';
import { openStepEffects } from './step-transaction.js';
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
  const { db, leaseMs, metrics, settle } = options;
  return async ({
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
  }) => {
    const toolName = task.operation.toolName;
    let state: JsonValue = starting.state;
    let stepIndex = stepsSaved;
    let statusMessage = task.statusMessage;
    // Each step starts on a lease just granted or renewed, with the cancel flag just read: the
    // claim did both for the first step (a cancel it saw was settled before), each checkpoint
    // does both for the next. So a step costs no renewal of its own; longer steps are renewed
    // by the lease keeper, whose first renewal comes a third of a lease after the claim.
    for (;;) {
      if (signal.aborted) return await settle.afterAbort(fence, signal.reason as AbortReason);
      if (options.isDraining()) return await settle.afterAbort(fence, 'shutdown');
      if (cancellation.requestedAtCheckpoint()) return await settle.afterAbort(fence, 'cancel');
      // One instant for the lease check and the logged start: a stall between them is the
      // step's tail, past its deadline, and is judged as such when the step ends.
      const started = performance.now();
      if (!lease.stillHeld(started)) return await settle.afterAbort(fence, 'lease unconfirmed');
      const execution = options.stepLog?.started(
        fence,
        state,
        Object.keys(task.inputResponses),
        started,
      );
      let outcome;
      let thrown: { error: unknown } | undefined;
      // The step's own transaction, if it asks for one: idle past a lease, it is rolled back.
      const effects = openStepEffects(db, fence, leaseMs);
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
      try {
        outcome = await (options.tracing
          ? inSpan('task.step', { 'mcp_tasks.step.index': stepIndex }, async (span) => {
              const stepOutcome = await runStep();
              span.setAttribute('mcp_tasks.step.outcome', stepOutcome?.kind ?? 'none');
              return stepOutcome;
            })
          : runStep());
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
      const failed = effects.failure();
      if (failed !== undefined) {
        // Nothing of the step was written. A fence that no longer held is a lost lease; an
        // outage is ours (afterError gives the lease back); the tool's own error is the task's.
        if (failed.by === 'ours') throw failed.error;
        if (signal.aborted) return await settle.afterAbort(fence, signal.reason as AbortReason);
        throw new ToolStepError(failed.error);
      }
      if (thrown !== undefined || outcome === undefined) {
        await effects.rollback();
        if (signal.aborted) return await settle.afterAbort(fence, signal.reason as AbortReason);
        throw new ToolStepError(
          thrown === undefined ? new Error(`${toolName} step returned nothing`) : thrown.error,
        );
      }
      const reason = signal.aborted ? (signal.reason as AbortReason) : undefined;
      if (reason === 'lease lost' || reason === 'lease unconfirmed') {
        await effects.rollback();
        return await settle.afterAbort(fence, reason);
      }

      // With a transaction, the outcome's fenced write joins it and the commit is the step's
      // end: a StaleLeaseError from that write (another worker claimed) rolls back everything.
      const trx = effects.handle();
      try {
        if (outcome.kind !== 'continue') {
          letGo();
          const ended = await settle.afterLastStep(
            fence,
            outcome,
            statusMessage,
            starting.version,
            trx,
          );
          await effects.commit();
          return ended;
        }
        statusMessage = outcome.statusMessage ?? statusMessage;
        // Saved even when a cancel or shutdown is pending: the progress is kept either way.
        // The checkpoint renews the lease, so its send time moves the local deadline too.
        const checkpointSentAt = performance.now();
        const checkpointState = outcome.state;
        const save = () =>
          saveCheckpoint(trx ?? db, fence, checkpointState, statusMessage, {
            toolVersion: starting.version,
            leaseMs,
          });
        const saved = await (options.tracing
          ? inSpan('task.checkpoint', { 'mcp_tasks.step.index': stepIndex }, save)
          : save());
        await effects.commit();
        cancellation.answeredByCheckpoint(saved);
        lease.confirmed(checkpointSentAt);
      } catch (error) {
        await effects.rollback();
        throw error;
      }
      state = outcome.state;
      stepIndex += 1;
    }
  };
}
