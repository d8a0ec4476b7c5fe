import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createStepLog, stepIdentity } from './step-log.js';

function captureLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'warn', base: { workerId: 'w-1' } }, sink), lines };
}

describe('the step log', () => {
  it('writes a start and an end line with task, epoch, step, worker, times and lease deadline, whatever LOG_LEVEL', () => {
    const { logger, lines } = captureLogger();
    const startedAt = performance.now();
    const execution = createStepLog(logger).started(
      { taskId: 't-1', epoch: 3 },
      { n: 1 },
      ['a'],
      startedAt,
    );
    const endedAt = performance.now();
    execution.ended('continue', { endedAt, leaseDeadline: endedAt + 1_500 });
    expect(lines).toHaveLength(2);
    const [start, end] = lines;
    const step = stepIdentity({ n: 1 }, ['a']);
    expect(start).toMatchObject({
      stepLog: 'start',
      taskId: 't-1',
      epoch: 3,
      step,
      workerId: 'w-1',
      msg: 'step started',
    });
    expect(end).toMatchObject({
      stepLog: 'end',
      taskId: 't-1',
      epoch: 3,
      step,
      outcome: 'continue',
    });
    expect(end!.startMs).toBe(start!.startMs);
    // The start is the instant the runner judged the lease by, not when the line was written.
    expect(start!.startMs as number).toBeCloseTo(performance.timeOrigin + startedAt, 3);
    expect(end!.endMs as number).toBeGreaterThanOrEqual(start!.startMs as number);
    // The lease deadline on the same wall-clock scale as the times, so a checker can compare.
    expect(end!.leaseDeadlineMs as number).toBeCloseTo((end!.endMs as number) + 1_500, 3);
    // Wall-clock based, so lines of several processes compare.
    expect(Math.abs((start!.startMs as number) - Date.now())).toBeLessThan(60_000);
  });

  it('names a step by where it started, whatever the order of the answered keys', () => {
    expect(stepIdentity({ phase: 'x' }, ['b', 'a'])).toBe(stepIdentity({ phase: 'x' }, ['a', 'b']));
    expect(stepIdentity({ phase: 'x' }, [])).not.toBe(stepIdentity({ phase: 'y' }, []));
  });
});
