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

/**
 * CPU time a process has used so far, ns: /proc/PID/schedstat's run time (the scheduler's own
 * count, ns steps), else /proc/PID/stat's user + system (10 ms steps). Throws when the process is
 * gone or not on this host.
 */
export function processCpuNs(pid: number): number {
  try {
    const onCpuNs = Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
    if (Number.isFinite(onCpuNs)) return onCpuNs;
  } catch {
    // No schedstat (a kernel without it): the coarser stat below.
  }
  return processCpuMs(pid) * 1_000_000;
}
