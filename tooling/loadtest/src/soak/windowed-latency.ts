import { build, type Histogram } from 'hdr-histogram-js';
import type { LatencySummary } from '../report/latency.js';

/**
 * Latencies of one kind of request, one HDR histogram per sample window, so a window's p99 is
 * exact and a phase (the first or last minutes of a soak) merges its windows' histograms instead
 * of averaging percentiles.
 */
export interface WindowedLatency {
  record(window: number, ms: number): void;
  /** p50/p95/p99/max of windows `from` … `to` inclusive (all zeros when nothing was recorded). */
  summary(from: number, to?: number): LatencySummary;
}

const newHistogram = (): Histogram => build({ numberOfSignificantValueDigits: 3 });

export function createWindowedLatency(): WindowedLatency {
  const windows: Histogram[] = [];
  const at = (window: number) => (windows[window] ??= newHistogram());
  return {
    record: (window, ms) => at(window).recordValue(Math.max(0, Math.round(ms * 1_000))),
    summary(from, to = from) {
      const merged = newHistogram();
      for (const window of windows.slice(Math.max(0, from), to + 1))
        if (window !== undefined) merged.add(window);
      const ms = (percentile: number) => merged.getValueAtPercentile(percentile) / 1_000;
      return {
        count: merged.totalCount,
        p50: ms(50),
        p95: ms(95),
        p99: ms(99),
        max: ms(100),
      };
    },
  };
}
