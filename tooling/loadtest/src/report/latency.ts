import { build, type Histogram } from 'hdr-histogram-js';

export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Latencies in ms, kept at microsecond resolution in an HDR histogram (3 significant digits). */
export interface LatencyRecorder {
  record(ms: number): void;
  summary(): LatencySummary;
}

export function createLatencyRecorder(): LatencyRecorder {
  const histogram: Histogram = build({ numberOfSignificantValueDigits: 3 });
  const ms = (micros: number) => micros / 1_000;
  return {
    record: (value) => histogram.recordValue(Math.max(0, Math.round(value * 1_000))),
    summary: () => ({
      count: histogram.totalCount,
      p50: ms(histogram.getValueAtPercentile(50)),
      p95: ms(histogram.getValueAtPercentile(95)),
      p99: ms(histogram.getValueAtPercentile(99)),
      max: ms(histogram.getValueAtPercentile(100)),
    }),
  };
}
