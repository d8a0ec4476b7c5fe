import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Fence } from '@mcp-tasks/store';
import type { JsonValue } from '@mcp-tasks/tasks';
import type { Logger } from '../logger.js';

/**
 * STEP_LOG=on: one JSON line when a step starts and one when it ends, for audits and load tests
 * that must prove no step ran on two workers at once (`pnpm loadtest check`). Off by default: at
 * full speed it doubles the log volume.
 *
 * Times are wall-clock milliseconds with sub-millisecond precision (`timeOrigin + now()`), so lines
 * from several processes on one host can be compared. A step killed mid-way leaves a start line
 * with no end line. `step` names what the step started from (a hash of the checkpoint and the
 * answered input keys): the same `step` in two epochs is a re-execution after a takeover.
 *
 * The end line carries `leaseDeadlineMs`, the worker's local lease deadline when the step ended
 * (lease-keeper.ts): the step is covered by its lease up to there. A step that ended after it
 * (the process stalled, or renewals went unconfirmed) is logged with outcome `lease-expired`
 * instead of what it returned, and the runner writes nothing of it: its tail ran unfenced by
 * time but fenced out of the store, and no other worker can have started before the deadline.
 */
export interface StepLog {
  /**
   * `startedAt` (performance.now() clock) is the instant the runner judged the lease held and
   * chose to run the step: a stall after it (SIGSTOP, a long GC) makes the step a stale tail,
   * not a step started past its deadline.
   */
  started(
    fence: Fence,
    state: JsonValue,
    answeredKeys: readonly string[],
    startedAt: number,
  ): StepExecution;
}

export interface StepExecution {
  /**
   * Both times on the performance.now() clock: when the step ended (the instant the runner judged
   * the lease by) and the lease deadline it held then.
   */
  ended(outcome: string, times: { endedAt: number; leaseDeadline: number }): void;
}

/** The outcome logged for a step that ended after the lease deadline: nothing of it is written. */
export const LEASE_EXPIRED_OUTCOME = 'lease-expired';

const toWallClockMs = (monotonicMs: number): number => performance.timeOrigin + monotonicMs;

export function stepIdentity(state: JsonValue, answeredKeys: readonly string[]): string {
  return createHash('sha1')
    .update(JSON.stringify([state, [...answeredKeys].sort()]))
    .digest('hex')
    .slice(0, 16);
}

export function createStepLog(logger: Logger): StepLog {
  // Its own level: STEP_LOG=on must not need LOG_LEVEL=info (and all that comes with it).
  const log = logger.child({}, { level: 'info' });
  return {
    started(fence, state, answeredKeys, startedAt) {
      const record = {
        stepLog: 'start' as const,
        taskId: fence.taskId,
        epoch: fence.epoch,
        step: stepIdentity(state, answeredKeys),
        startMs: toWallClockMs(startedAt),
      };
      log.info(record, 'step started');
      return {
        ended(outcome, { endedAt, leaseDeadline }) {
          log.info(
            {
              ...record,
              stepLog: 'end',
              endMs: toWallClockMs(endedAt),
              leaseDeadlineMs: toWallClockMs(leaseDeadline),
              outcome,
            },
            'step ended',
          );
        },
      };
    },
  };
}
