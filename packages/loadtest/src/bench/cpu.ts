import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc times (USER_HZ: 100 on Linux). */
const TICKS_PER_S = 100;

/** CPU time (user + system) a process has used so far, ms, from /proc/PID/stat (10 ms steps). */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at index 2 (state).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1_000) / TICKS_PER_S;
}
