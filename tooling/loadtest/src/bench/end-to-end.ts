import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Pool } from 'undici';
import { startCompletionWatcher, type CompletionWatcher } from './completion-watcher.js';
import type { BenchStack } from './bench-stack.js';
import {
  busyShare,
  machineCpuTicks,
  mainThreadSwitches,
  processCpuMs,
  processIoSyscalls,
  sumOverProcesses,
  tcpSegmentsSent,
} from './cpu.js';
import { createTaskRequest, sendMcp, type HttpRequestSpec } from './mcp-requests.js';
import { commandDeltas, redisCommandCalls } from './redis-commandstats.js';

export interface EndToEndResult {
  gateways: number;
  workers: number;
  concurrency: number;
  tasksPerS: number;
  /** Transactions committed in the bench database per task (the watcher's own reads subtracted). */
  commitsPerTask: number;
  /**
   * Redis commands per task (`INFO commandstats` delta, server-wide), and each command's share,
   * largest first. On a shared Redis other clients' commands count too: read it as an upper bound.
   */
  redisCommandsPerTask: number;
  redisCommands: { command: string; perTask: number }[];
  gatewayCpuMsPerTask: number;
  workerCpuMsPerTask: number;
  /**
   * The bench process's own CPU per task: its clients (requests, listen streams) and the
   * completion watcher. On a 2-core machine these cycles come out of what the service could use.
   */
  clientCpuMsPerTask: number;
  /** The gateways' and the workers' main-thread context switches per task (mainThreadSwitches). */
  gatewaySwitchesPerTask: { sleeps: number; preempted: number };
  workerSwitchesPerTask: { sleeps: number; preempted: number };
  /** The gateways' and the workers' read and write system calls per task (processIoSyscalls). */
  gatewaySyscallsPerTask: { reads: number; writes: number };
  workerSyscallsPerTask: { reads: number; writes: number };
  /**
   * TCP segments the whole machine sent per task (tcpSegmentsSent): the messages a task costs
   * end to end — requests, replies, Postgres's and Redis's answers, the bench client's own — and
   * bare ACKs, whatever the machine's speed. Anything else talking TCP meanwhile counts too.
   */
  tcpSegmentsPerTask: number;
  /**
   * The share of the machine's cores busy during the measured phase (every process: the bench's
   * own clients, Postgres and Redis too). Well under 1, the line is bound by its clients' waits.
   */
  machineBusy: number;
  tasks: number;
  failures: number;
}

/** One client's whole task, from its first request to its end; see runEndToEnd's `lifecycle`. */
export type TaskLifecycle = (context: {
  /** The gateway this turn goes to, and the next one (a watcher elsewhere reads from there). */
  gateway: { url: string; pool: Pool };
  other: { url: string; pool: Pool };
  watcher: CompletionWatcher;
  turn: number;
}) => Promise<void>;

/**
 * A busy backend flushes its statistics to pg_stat_database at most once a second; the stack's
 * backends keep working (sweeper, heartbeats) and flush within this. The watcher, idle once a
 * phase ends, is flushed on demand (CompletionWatcher.flushStats).
 */
const STATS_SETTLE_MS = 2_000;

/** Transactions committed in `database` so far, as pg_stat_database counts them. */
export async function xactCommits(statsUrl: string, database: string): Promise<number> {
  const client = new pg.Client({ connectionString: statsUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ xact_commit: string }>(
      'SELECT xact_commit FROM pg_stat_database WHERE datname = $1',
      [database],
    );
    return Number(rows[0]?.xact_commit ?? 0);
  } finally {
    await client.end();
  }
}

/**
 * `concurrency` clients, each in a loop: create a no-input task on the next gateway, wait until it
 * has ended, again. A warm-up phase first; then a measured phase whose tasks are all waited for,
 * so commits and CPU are per finished task. Tasks/s counts tasks finished within the phase.
 */
export interface EndToEndOptions {
  stack: BenchStack;
  databaseUrl: string;
  /** A connection to another database of the server, for pg_stat_database. */
  statsUrl: string;
  databaseName: string;
  redisUrl: string;
  concurrency: number;
  durationS: number;
  warmupS: number;
  /** The task each client creates; default the one-step no-input task (createTaskRequest). */
  request?: () => HttpRequestSpec;
  /** The whole life of one task, when it is more than a create and a wait (realistic-mix.ts). */
  lifecycle?: TaskLifecycle;
}

/** The counters read before and after the measured phase. */
async function readCounters(
  options: EndToEndOptions,
  watcher: CompletionWatcher,
  finished: number,
) {
  const { stack } = options;
  // Before the reads below, which talk TCP themselves: the phase's count then takes in the
  // first reading's few dozen segments, not the last one's.
  const tcpSegments = tcpSegmentsSent();
  await watcher.flushStats();
  const gatewayPids = stack.gateways.map((g) => g.process.child.pid!);
  const workerPids = stack.workers.map((w) => w.child.pid!);
  return {
    commits: await xactCommits(options.statsUrl, options.databaseName),
    redis: await redisCommandCalls(options.redisUrl),
    watcherQueries: watcher.queries(),
    cpu: {
      gateways: gatewayPids.reduce((sum, pid) => sum + processCpuMs(pid), 0),
      workers: workerPids.reduce((sum, pid) => sum + processCpuMs(pid), 0),
      client: processCpuMs(process.pid),
    },
    switches: {
      gateways: sumOverProcesses(gatewayPids, mainThreadSwitches),
      workers: sumOverProcesses(workerPids, mainThreadSwitches),
    },
    syscalls: {
      gateways: sumOverProcesses(gatewayPids, processIoSyscalls),
      workers: sumOverProcesses(workerPids, processIoSyscalls),
    },
    tcpSegments,
    finished,
  };
}

type Counters = Awaited<ReturnType<typeof readCounters>>;

/**
 * The closed loop: `concurrency` clients, each running one task's lifecycle after the other,
 * the gateways in turns. A phase runs for the given seconds.
 */
function createLoad(
  options: EndToEndOptions,
  lifecycle: TaskLifecycle,
  watcher: CompletionWatcher,
  pools: Pool[],
) {
  const { stack } = options;
  let turn = 0;
  const counts = { failures: 0, finished: 0 };

  async function phase(
    seconds: number,
  ): Promise<{ finishedInTime: number; seconds: number; machineBusy: number }> {
    const deadline = performance.now() + seconds * 1_000;
    const started = performance.now();
    // Over the phase's window exactly: after it the clients only finish what they started.
    const machineAtStart = machineCpuTicks();
    let machineBusy = Number.NaN;
    const windowEnd = setTimeout(
      () => (machineBusy = busyShare(machineAtStart, machineCpuTicks())),
      seconds * 1_000,
    );
    let finishedInTime = 0;
    let firstFinishedAt: number | undefined;
    const client = async () => {
      while (performance.now() < deadline) {
        const mine = turn++;
        const index = mine % stack.gateways.length;
        const next = (index + 1) % stack.gateways.length;
        try {
          await lifecycle({
            gateway: { url: stack.gateways[index]!.url, pool: pools[index]! },
            other: { url: stack.gateways[next]!.url, pool: pools[next]! },
            watcher,
            turn: mine,
          });
          counts.finished += 1;
          firstFinishedAt ??= performance.now();
          if (performance.now() <= deadline) finishedInTime += 1;
        } catch {
          counts.failures += 1;
          await sleep(50);
        }
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, client));
    clearTimeout(windowEnd);
    if (Number.isNaN(machineBusy)) machineBusy = busyShare(machineAtStart, machineCpuTicks());
    // A window shorter than one lifecycle on a starved machine (the CI smoke's 1 s of the
    // realistic mix, beside eight other checks) ends none: the rate is then the first task over
    // the time it took, a longer window, not a zero.
    if (finishedInTime === 0 && firstFinishedAt !== undefined)
      return { finishedInTime: 1, seconds: (firstFinishedAt - started) / 1_000, machineBusy };
    return {
      finishedInTime,
      seconds: (Math.min(performance.now(), deadline) - started) / 1_000,
      machineBusy,
    };
  }
  return { phase, counts };
}

function endToEndResult(
  options: EndToEndOptions,
  measured: { finishedInTime: number; seconds: number; machineBusy: number },
  before: Counters,
  after: Counters,
  failures: number,
): EndToEndResult {
  const { stack } = options;
  const tasks = after.finished - before.finished;
  const per = (value: number) => (tasks === 0 ? Number.NaN : value / tasks);
  /** Each counter's growth over the measured phase, per task. */
  const perTask = <T extends Record<string, number>>(start: T, end: T): T =>
    Object.fromEntries(Object.keys(start).map((key) => [key, per(end[key]! - start[key]!)])) as T;
  // The bench's own "before" INFO shows in the "after" counts (a command counts once it ran).
  const redis = commandDeltas(before.redis, {
    ...after.redis,
    info: (after.redis.info ?? 1) - 1,
  });
  return {
    gateways: stack.gateways.length,
    workers: stack.workers.length,
    concurrency: options.concurrency,
    tasksPerS: measured.finishedInTime / measured.seconds,
    commitsPerTask: per(
      after.commits - before.commits - (after.watcherQueries - before.watcherQueries),
    ),
    redisCommandsPerTask: per(redis.reduce((sum, entry) => sum + entry.calls, 0)),
    redisCommands: redis.map((entry) => ({ command: entry.command, perTask: per(entry.calls) })),
    gatewayCpuMsPerTask: per(after.cpu.gateways - before.cpu.gateways),
    workerCpuMsPerTask: per(after.cpu.workers - before.cpu.workers),
    clientCpuMsPerTask: per(after.cpu.client - before.cpu.client),
    gatewaySwitchesPerTask: perTask(before.switches.gateways, after.switches.gateways),
    workerSwitchesPerTask: perTask(before.switches.workers, after.switches.workers),
    gatewaySyscallsPerTask: perTask(before.syscalls.gateways, after.syscalls.gateways),
    workerSyscallsPerTask: perTask(before.syscalls.workers, after.syscalls.workers),
    tcpSegmentsPerTask: per(after.tcpSegments - before.tcpSegments),
    machineBusy: measured.machineBusy,
    tasks,
    failures,
  };
}

export async function runEndToEnd(options: EndToEndOptions): Promise<EndToEndResult> {
  const request = options.request ?? createTaskRequest;
  const lifecycle: TaskLifecycle =
    options.lifecycle ??
    (async ({ gateway, watcher }) => {
      const created = await sendMcp(gateway.url, request(), gateway.pool);
      await watcher.waitFor(created.taskId as string);
    });
  const { stack } = options;
  const watcher = startCompletionWatcher(options.databaseUrl);
  // Keep-alive connections per gateway, as a load tool keeps them (see sendMcp).
  const pools = stack.gateways.map(
    (gateway) => new Pool(gateway.url, { keepAliveTimeout: 60_000 }),
  );
  const { phase, counts } = createLoad(options, lifecycle, watcher, pools);
  try {
    await phase(options.warmupS);
    await sleep(STATS_SETTLE_MS);
    const before = await readCounters(options, watcher, counts.finished);
    const measured = await phase(options.durationS);
    await sleep(STATS_SETTLE_MS);
    const after = await readCounters(options, watcher, counts.finished);
    return endToEndResult(options, measured, before, after, counts.failures);
  } finally {
    await watcher.stop();
    await Promise.all(pools.map((pool) => pool.close()));
  }
}
