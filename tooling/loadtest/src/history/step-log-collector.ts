import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { HistoryRecorder } from './recorder.js';
import { StepRecordSchema, type StepRecord } from './records.js';

/**
 * Turns one line of a worker's stdout into a step record, or undefined for every other line. The
 * worker writes these with STEP_LOG=on (apps/worker/src/attempt/step-log.ts); `worker` comes from the
 * line's `workerId`.
 */
export function parseStepLogLine(line: string): StepRecord | undefined {
  if (!line.includes('"stepLog"')) return undefined;
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const parsed = StepRecordSchema.safeParse({
    kind: 'step',
    phase: value.stepLog,
    taskId: value.taskId,
    step: value.step,
    epoch: value.epoch,
    worker: value.workerId,
    startMs: value.startMs,
    endMs: value.endMs,
    outcome: value.outcome,
    leaseDeadlineMs: value.leaseDeadlineMs,
  });
  return parsed.success ? parsed.data : undefined;
}

/** Feeds every step line of a worker's stdout into the history until the stream ends. */
export async function collectStepLog(stdout: Readable, recorder: HistoryRecorder): Promise<void> {
  const lines = createInterface({ input: stdout, crlfDelay: Infinity });
  for await (const line of lines) {
    const record = parseStepLogLine(line);
    if (record !== undefined) recorder.step(record);
  }
}
