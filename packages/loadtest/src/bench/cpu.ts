import { readFileSync } from 'node:fs';
import { statCpuMs, statFields, TICKS_PER_S } from './cpu-per-task.js';

/** CPU time (user + system) a process has used so far, ms, from /proc/PID/stat (10 ms steps). */
export function processCpuMs(pid: number): number {
  return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** When a process started, ms after boot, from /proc/PID/stat (10 ms steps). */
export function processStartMs(pid: number): number {
  return (Number(statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'))[19]) * 1_000) / TICKS_PER_S;
}
