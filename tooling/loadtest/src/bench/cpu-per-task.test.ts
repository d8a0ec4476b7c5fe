import { describe, expect, it } from 'vitest';
import { cpuMsPerTask, median, pairedRatios, statCpuMs } from './cpu-per-task.js';

// A /proc/PID/stat line of a node process whose name holds a space and a ')': utime 1234 ticks,
// stime 56 ticks (fields 14 and 15).
const STAT =
  '4242 (node (main) x) S 4200 4200 8230 0 -1 4194304 99 0 0 0 1234 56 0 0 20 0 11 0 50969 3133440 393';

describe('CPU per task at a fixed rate', () => {
  it('reads utime + stime from a /proc/PID/stat line, in ms, past a name with spaces and )', () => {
    expect(statCpuMs(STAT)).toBe(12_900);
  });

  it('divides the CPU spent in the window by the tasks finished in it', () => {
    expect(cpuMsPerTask(12_900, 14_900, 4_000)).toBe(0.5);
    expect(cpuMsPerTask(12_900, 12_900, 0)).toBeNaN();
  });

  it('takes the middle of an odd list and the mean of the middle two of an even one', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('gives each pair its candidate ÷ baseline ratio, their median and their spread', () => {
    expect(pairedRatios([2, 4, 1], [2.5, 4, 0.75])).toEqual({
      ratios: [1.25, 1, 0.75],
      median: 1,
      min: 0.75,
      max: 1.25,
    });
  });

  it('refuses lists of different lengths: a ratio is only fair within a pair', () => {
    expect(() => pairedRatios([1, 2], [1])).toThrow('2 baseline rounds but 1 candidate rounds');
  });
});
