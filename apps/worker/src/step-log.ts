import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Fence } from '@mcp-tasks/store';
import type { JsonValue } from '@mcp-tasks/tasks';
import type { Logger } from './logger.js';

/**
 * STEP_LOG=on: one JSON line when a step starts and one when it ends, for audits and load tests
 * that must prove no step ran on two workers at once (`pnpm loadtest check`). Off by default: at
 * full speed it doubles the log volume.
 *
 * Times are wall-clock milliseconds with sub-millisecond precision (`timeOrigin + now()`), so lines
 * from several processes on one host can be compared. A step killed mid-way leaves a start line
 * with no end line. `step` names what the step started from (a hash of the checkpoint and the
 * answered input keys): the same `step` in two epochs is a re-execution after a takeover.
 */
export interface StepLog {
  started(fence: Fence, state: JsonValue, answeredKeys: readonly string[]): StepExecution;
}

export interface StepExecution {
  ended(outcome: string): void;
}

const wallClockMs = (): number => performance.timeOrigin + performance.now();

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
    started(fence, state, answeredKeys) {
      const record = {
        stepLog: 'start' as const,
        taskId: fence.taskId,
        epoch: fence.epoch,
        step: stepIdentity(state, answeredKeys),
        startMs: wallClockMs(),
      };
      log.info(record, 'step started');
      return {
        ended(outcome) {
          log.info({ ...record, stepLog: 'end', endMs: wallClockMs(), outcome }, 'step ended');
        },
      };
    },
  };
}
