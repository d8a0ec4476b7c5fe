import { performance } from 'node:perf_hooks';

/** The history's clock: wall-clock ms, monotonic within this process (see records.ts). */
export const historyNow = (): number => performance.timeOrigin + performance.now();
