import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc times (USER_HZ: 100 on Linux). */
const TICKS_PER_S = 100;

/** The fields of /proc/PID/stat after the command name (which may hold spaces), from `state`. */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU time (user + system) a process has used so far, ms, from /proc/PID/stat (10 ms steps). */
export function processCpuMs(pid: number): number {
  const fields = statFields(pid);
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1_000) / TICKS_PER_S;
}

/** When a process started, ms after boot, from /proc/PID/stat (10 ms steps). */
export function processStartMs(pid: number): number {
  return (Number(statFields(pid)[19]) * 1_000) / TICKS_PER_S;
}
