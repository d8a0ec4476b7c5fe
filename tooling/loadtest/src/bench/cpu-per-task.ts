/**
 * The arithmetic of the fixed-rate CPU figures (fixed-rate-cpu.ts): CPU time from /proc, CPU per
 * task over a window, and the ratios of rounds taken in pairs.
 */

/** Clock ticks per second of /proc times (USER_HZ: 100 on Linux). */
export const TICKS_PER_S = 100;

/** The fields of a /proc/PID/stat line after the command name (which may hold spaces and ')'). */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU time (utime + stime) of a /proc/PID/stat line, ms (10 ms steps). */
export function statCpuMs(stat: string): number {
  const fields = statFields(stat);
  return ((Number(fields[11]) + Number(fields[12])) * 1_000) / TICKS_PER_S;
}

/** CPU ms per task over a window; NaN when no task finished in it. */
export function cpuMsPerTask(cpuMsBefore: number, cpuMsAfter: number, tasks: number): number {
  return tasks > 0 ? (cpuMsAfter - cpuMsBefore) / tasks : Number.NaN;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export interface PairedRatios {
  /** candidate ÷ baseline of each pair, in the order taken. */
  ratios: number[];
  median: number;
  min: number;
  max: number;
}

/**
 * Each pair's candidate ÷ baseline, their median and their spread. The two rounds of a pair are
 * taken back to back, so a slow spell of a shared machine falls on both: the ratios are compared
 * within pairs, never across them.
 */
export function pairedRatios(
  baseline: readonly number[],
  candidate: readonly number[],
): PairedRatios {
  if (baseline.length !== candidate.length)
    throw new Error(
      `${baseline.length} baseline rounds but ${candidate.length} candidate rounds: the ratios are of pairs`,
    );
  const ratios = baseline.map((base, i) => candidate[i]! / base);
  return {
    ratios,
    median: median(ratios),
    min: Math.min(...ratios),
    max: Math.max(...ratios),
  };
}
