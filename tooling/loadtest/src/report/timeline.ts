import type { CheckResult } from '../check/checker.js';
import type { HistoryRecord } from '../history/records.js';
import { createLatencyRecorder, type LatencyRecorder } from './latency.js';
import { createLatencies, errorKey, firstTerminal } from './summary.js';

/** Per-bucket series for the report's charts; x is seconds since the history's start. */
export interface Timeline {
  bucketS: number;
  x: number[];
  createdPerS: number[];
  completedPerS: number[];
  createP50Ms: (number | null)[];
  createP99Ms: (number | null)[];
  errorsPerS: number[];
  chaos: { x: number; id: string; label: string }[];
}

/** One-second buckets, wider for long runs so a chart keeps at most ~1,200 points. */
export function bucketSecondsFor(durationS: number): number {
  return Math.max(1, Math.ceil(durationS / 1_200));
}

export function buildTimeline(records: readonly HistoryRecord[], check: CheckResult): Timeline {
  const start = check.history.start;
  const durationS = (check.history.end - start) / 1_000;
  const bucketS = bucketSecondsFor(durationS);
  const buckets = Math.max(1, Math.floor(durationS / bucketS) + 1);
  const at = (t: number) =>
    Math.min(buckets - 1, Math.max(0, Math.floor((t - start) / 1_000 / bucketS)));
  const zeros = () => Array.from({ length: buckets }, () => 0);
  const created = zeros();
  const completed = zeros();
  const errors = zeros();
  const latencies: (LatencyRecorder | undefined)[] = Array.from(
    { length: buckets },
    () => undefined,
  );

  for (const { at: t, ms } of createLatencies(records)) {
    const i = at(t);
    created[i]! += 1;
    (latencies[i] ??= createLatencyRecorder()).record(ms);
  }
  for (const task of check.history.tasks.values()) {
    const terminal = firstTerminal(task);
    if (terminal !== undefined) completed[at(terminal.replyT)]! += 1;
  }
  for (const record of records) {
    if (record.kind === 'reply' && errorKey(record) !== undefined) errors[at(record.t)]! += 1;
  }
  const perS = (counts: number[]) => counts.map((n) => n / bucketS);
  const summaries = latencies.map((l) => l?.summary());
  return {
    bucketS,
    x: Array.from({ length: buckets }, (_, i) => i * bucketS),
    createdPerS: perS(created),
    completedPerS: perS(completed),
    createP50Ms: summaries.map((s) => s?.p50 ?? null),
    createP99Ms: summaries.map((s) => s?.p99 ?? null),
    errorsPerS: perS(errors),
    chaos: check.history.chaos.map((e) => ({
      x: (e.t - start) / 1_000,
      id: e.id,
      label: `${e.action} ${e.target}`,
    })),
  };
}
