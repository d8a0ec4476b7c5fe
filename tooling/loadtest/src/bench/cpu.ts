import { readdirSync, readFileSync } from 'node:fs';
import { statCpuMs, statFields, TICKS_PER_S } from './cpu-per-task.js';

/** CPU time (user + system) a process has used so far, ms, from /proc/PID/stat (10 ms steps). */
export function processCpuMs(pid: number): number {
  return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/**
 * A process's main thread's context switches so far, from /proc/PID/task/PID/status: `sleeps`
 * (voluntary: for a Node process about once per event-loop wait that found nothing to do, so per
 * task the wake-ups a task costs) and `preempted` (involuntary: the scheduler took the core away,
 * as it does when more processes are runnable than there are cores).
 */
export function mainThreadSwitches(pid: number): { sleeps: number; preempted: number } {
  const field = procFields(`/proc/${pid}/task/${pid}/status`);
  return {
    sleeps: field('voluntary_ctxt_switches'),
    preempted: field('nonvoluntary_ctxt_switches'),
  };
}

/**
 * A process's read and write system calls so far (all its threads), from /proc/PID/io's `syscr`
 * and `syscw`. On these VMs a system call is dear, and a socket write on loopback also wakes its
 * reader: per task, the writes are the round trips and replies the task cost this process.
 */
export function processIoSyscalls(pid: number): { reads: number; writes: number } {
  const field = procFields(`/proc/${pid}/io`);
  return { reads: field('syscr'), writes: field('syscw') };
}

/** Reads a /proc file of `name: value` lines; the reader names the path of a missing field. */
function procFields(path: string): (name: string) => number {
  const text = readFileSync(path, 'utf8');
  return (name) => {
    const match = new RegExp(`^${name}:\\s*(\\d+)$`, 'm').exec(text);
    if (match === null) throw new Error(`no ${name} in ${path}`);
    return Number(match[1]);
  };
}

/** `read` of each process, summed field by field (the counts of a stack's gateways, say). */
export function sumOverProcesses<T extends Record<string, number>>(
  pids: readonly number[],
  read: (pid: number) => T,
): T {
  if (pids.length === 0) throw new Error('no process to count');
  return pids
    .map(read)
    .reduce(
      (sum, counts) =>
        Object.fromEntries(Object.entries(counts).map(([key, n]) => [key, sum[key]! + n])) as T,
    );
}

/**
 * The whole machine's CPU time so far, in clock ticks, from the first line of /proc/stat: `busy`
 * (user, nice, system, irq, softirq) and `total` (those, idle, iowait and steal). Between two
 * reads, busy ÷ total is the share of all cores that something ran on — a closed loop that leaves
 * much of it idle is bound by its latency, not by the CPU.
 */
export function machineCpuTicks(stat = readFileSync('/proc/stat', 'utf8')): {
  busy: number;
  total: number;
} {
  const line = stat.split('\n', 1)[0]!;
  const fields = line.trim().split(/\s+/);
  if (fields[0] !== 'cpu' || fields.length < 9) throw new Error(`unexpected /proc/stat: ${line}`);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields
    .slice(1, 9)
    .map(Number) as [number, number, number, number, number, number, number, number];
  const busy = user + nice + system + irq + softirq;
  return { busy, total: busy + idle + iowait + steal };
}

/** The share of all cores busy between two machineCpuTicks reads (NaN when no tick passed). */
export function busyShare(
  before: { busy: number; total: number },
  after: { busy: number; total: number },
): number {
  const total = after.total - before.total;
  return total <= 0 ? Number.NaN : (after.busy - before.busy) / total;
}

/** When a process started, ms after boot, from /proc/PID/stat (10 ms steps). */
export function processStartMs(pid: number): number {
  return (Number(statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'))[19]) * 1_000) / TICKS_PER_S;
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

/** This host's processes named `name` (their /proc comm, as `pgrep -x` matches): postgres, redis-server. */
export function pidsNamed(name: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** processCpuNs of each of `pids` still running; one that exited meanwhile is left out. */
export function cpuNsOfRunning(pids: Iterable<number>): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const pid of pids) {
    try {
      cpu.set(pid, processCpuNs(pid));
    } catch {
      // Exited between the list and the read: its work is lost to this count.
    }
  }
  return cpu;
}

/**
 * TCP segments this machine (its network namespace) has sent so far, from /proc/net/snmp's
 * `Tcp: OutSegs`. Every hop of the stack is loopback TCP (client → gateway → Postgres, Redis;
 * worker → both), so between two reads this counts the messages the line exchanged, each
 * process's replies included (Postgres's `send` calls are not in /proc/PID/io), plus the bare
 * ACKs. On these VMs a segment with data costs its sender a dear system call and most wake their
 * reader; a bare ACK is the kernel's own.
 */
export function tcpSegmentsSent(snmp = readFileSync('/proc/net/snmp', 'utf8')): number {
  const lines = snmp.split('\n').filter((line) => line.startsWith('Tcp:'));
  const [names, values] = lines.map((line) => line.trim().split(/\s+/));
  const index = names?.indexOf('OutSegs') ?? -1;
  const value = index > 0 ? Number(values?.[index]) : Number.NaN;
  if (!Number.isFinite(value)) throw new Error('no Tcp OutSegs in /proc/net/snmp');
  return value;
}
