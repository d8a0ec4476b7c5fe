/**
 * Where a realistic task's time goes (issue 30): CLIENTS clients run the realistic lifecycle
 * (MRTR round, create, wait for the pause, answer, wait for the end; SUBSCRIBE_EVERY=3 follows
 * one in three with a listen watcher instead, as the bench's line does) against
 * one gateway and one worker for SECONDS, timing each stage as the client saw it; then the
 * task history's events per task by kind and the median gap between them (server side).
 *
 *   CLIENTS=32 SECONDS=10 pnpm exec tsx --conditions=@mcp-tasks/source \
 *     tooling/loadtest/src/bench/realistic-timeline-probe.ts
 *
 * APPS_ROOT=/path/to/another/checkout runs that tree's built gateway and worker instead (a
 * baseline, for A/B turns). The gateway's CPU time over the run is printed per lifecycle.
 * HISTORY=off disables the task history's triggers on the scratch database (what the history
 * costs this workload; nothing is then printed per event kind). The CPU of the Postgres
 * backends serving the stack's pools is printed per lifecycle too: compare two probes run at once
 * (HISTORY=on beside HISTORY=off), since run in turns the machine's swings move it as well.
 * So is the whole machine's (the worker, Redis, every Postgres process, the probe itself: with
 * two probes at once, Redis and Postgres are both stacks'), the TCP segments a lifecycle sends
 * hop by hop (tcp-hops.ts: client → gateway, worker → postgres, …; run it alone, or both probes'
 * hops count), and the deadlocks Postgres broke in the scratch database, counted in its log.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { REALISTIC_TOOL_MODULE } from '@mcp-tasks/tools/bench';
import pg from 'pg';
import { Pool } from 'undici';
import { startCompletionWatcher } from './completion-watcher.js';
import { sendMcp } from './mcp-requests.js';
import { approval, creatingCall, followAndAnswer, labelRound } from './realistic-requests.js';
import { startProbeStack } from './probe-stack.js';
import {
  busyShare,
  cpuNsOfRunning,
  machineCpuTicks,
  pidsNamed,
  processCpuNs,
  processIoSyscalls,
} from './cpu.js';
import { cpuNsBetween, openBackendCpuMeter } from './backend-cpu.js';
import { describeHops, openSegmentMeter, stackRoles } from './tcp-hops.js';

const clients = Number(process.env.CLIENTS ?? 32);
const seconds = Number(process.env.SECONDS ?? 10);

/** LOG_STATEMENTS=1: the scratch database logs every statement (to count them by kind). */
const logStatements = process.env.LOG_STATEMENTS === '1';
const profileDir = process.env.CPU_PROF_DIR;
/** SUBSCRIBE_EVERY=3: one lifecycle in three waits with a listen watcher, as the bench's line. */
const subscribeEvery = Number(process.env.SUBSCRIBE_EVERY ?? 0);
const appsRoot = process.env.APPS_ROOT;
const historyOff = process.env.HISTORY === 'off';

/** HISTORY=off: the scratch database records no task history (its two writing triggers off). */
async function disableHistory(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('ALTER TABLE tasks DISABLE TRIGGER task_events_on_insert');
    await client.query('ALTER TABLE tasks DISABLE TRIGGER task_events_on_update');
  } finally {
    await client.end();
  }
}

async function logEveryStatement(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const name = (await client.query<{ d: string }>('SELECT current_database() AS d')).rows[0]!.d;
    await client.query(`ALTER DATABASE "${name}" SET log_statement = 'all'`);
  } finally {
    await client.end();
  }
}

/**
 * The CPU the worker, Redis, every Postgres process and this probe spent from now to read(),
 * and the machine's busy share: what a lifecycle costs the whole 2-core machine.
 */
function openMachineCpuMeter(workerPid: number) {
  const postgres = () => cpuNsOfRunning(pidsNamed('postgres'));
  const redis = pidsNamed('redis-server');
  const start = {
    ticks: machineCpuTicks(),
    worker: processCpuNs(workerPid),
    redis: cpuNsOfRunning(redis),
    postgres: postgres(),
    probe: process.cpuUsage(),
  };
  return {
    read() {
      const probe = process.cpuUsage(start.probe);
      return {
        busy: busyShare(start.ticks, machineCpuTicks()),
        ms: {
          worker: (processCpuNs(workerPid) - start.worker) / 1e6,
          redis: cpuNsBetween(start.redis, cpuNsOfRunning(redis)) / 1e6,
          'all postgres': cpuNsBetween(start.postgres, postgres()) / 1e6,
          probe: (probe.user + probe.system) / 1e3,
        },
      };
    },
  };
}

/** Where the server writes its log (Debian's default for the local cluster). */
const logFile = process.env.PG_LOG_FILE ?? '/var/log/postgresql/postgresql-15-main.log';

/** How many deadlocks the server broke in `database`, as its log says (0 without the log). */
function deadlocksLogged(database: string): number {
  let log: string;
  try {
    log = readFileSync(logFile, 'utf8');
  } catch {
    return 0;
  }
  const marker = `@${database} ERROR:  deadlock detected`;
  return log.split('\n').filter((line) => line.includes(marker)).length;
}

/**
 * The statements the server logged for `database`, by their text (parameters and literals
 * masked, the first 120 characters), most frequent first.
 */
function loggedStatements(database: string): [string, number][] {
  const counts = new Map<string, number>();
  let current: string | undefined;
  const count = () => {
    if (current === undefined) return;
    const text = current
      .replace(/^(execute [^:]*|statement): /, '')
      .replace(/\s+/g, ' ')
      .replace(/\$\d+/g, '$')
      .replace(/'[^']*'/g, '?')
      .trim()
      .slice(0, 120);
    counts.set(text, (counts.get(text) ?? 0) + 1);
  };
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (/^\d{4}-\d\d-\d\d /.test(line)) {
      count();
      const at = line.indexOf('LOG:  ');
      current =
        line.includes(`@${database} `) && at >= 0 && !line.includes('DETAIL:')
          ? line.slice(at + 6)
          : undefined;
    } else if (current !== undefined) current += ` ${line}`;
  }
  count();
  return [...counts].sort((a, b) => b[1] - a[1]);
}

const STAGES = ['round', 'create', 'to pause', 'answer', 'to end'] as const;
type Stage = (typeof STAGES)[number];

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const p90 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length * 0.9)] ?? Number.NaN;
};

async function main(): Promise<void> {
  const probe = await startProbeStack('realistic-timeline', 1, {
    workerConcurrency: clients,
    env: { MCP_TOOL_MODULES: REALISTIC_TOOL_MODULE },
    nodeArgs: profileDir === undefined ? undefined : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
    beforeStart: async (url) => {
      if (logStatements) await logEveryStatement(url);
      if (historyOff) await disableHistory(url);
    },
    appsRoot,
  });
  const gateway = probe.stack.gateways[0]!;
  const http = new Pool(gateway.url, { keepAliveTimeout: 60_000 });
  const watcher = startCompletionWatcher(probe.database.connectionString);
  const times: Record<Stage, number[]> = {
    round: [],
    create: [],
    'to pause': [],
    answer: [],
    'to end': [],
  };
  let turn = 0;
  let done = 0;
  let subscribed = 0;
  const gatewayPid = gateway.process.child.pid!;
  const gatewayCpuAtStart = processCpuNs(gatewayPid);
  const workerPid = probe.stack.workers[0]!.child.pid!;
  const syscallsAtStart = [processIoSyscalls(gatewayPid), processIoSyscalls(workerPid)];
  // The server's side: the CPU of the backends serving the gateway's and the worker's pools.
  const backends = await openBackendCpuMeter(probe.database.connectionString, {
    prefix: 'mcp-tasks',
  });
  const backendsAtStart = await backends?.snapshot();
  // The whole machine's CPU, by process, to see what a lifecycle costs and who spends it.
  const machine = openMachineCpuMeter(workerPid);
  // And the messages it costs, hop by hop.
  const segments = await openSegmentMeter();
  try {
    const deadline = performance.now() + seconds * 1_000;
    const client = async () => {
      while (performance.now() < deadline) {
        const marks: number[] = [performance.now()];
        const round = await sendMcp(gateway.url, labelRound(), http);
        marks.push(performance.now());
        const created = await sendMcp(
          gateway.url,
          creatingCall(round.requestState as string, turn++),
          http,
        );
        marks.push(performance.now());
        const taskId = created.taskId as string;
        if (subscribeEvery > 0 && turn % subscribeEvery === 0) {
          // As the bench's line does for one task in three: a listen watcher answers the pause.
          await followAndAnswer(gateway.url, http, taskId);
          subscribed += 1;
          continue;
        }
        await watcher.waitFor(taskId, ['input_required']);
        marks.push(performance.now());
        await sendMcp(gateway.url, approval(taskId), http);
        marks.push(performance.now());
        await watcher.waitFor(taskId);
        marks.push(performance.now());
        STAGES.forEach((stage, i) => times[stage].push(marks[i + 1]! - marks[i]!));
        done += 1;
      }
    };
    await Promise.all(Array.from({ length: clients }, client));
    const gatewayCpuMs = (processCpuNs(gatewayPid) - gatewayCpuAtStart) / 1e6;
    const backendCpuMs =
      backends === null || backendsAtStart === undefined
        ? undefined
        : cpuNsBetween(backendsAtStart, await backends.snapshot()) / 1e6;
    const machineCpu = machine.read();
    const hops = (await segments.stop()).byHop(
      stackRoles({ gateway: [gatewayPid], worker: [workerPid], probe: [process.pid] }),
    );
    const syscalls = [processIoSyscalls(gatewayPid), processIoSyscalls(workerPid)].map(
      (now, i) => ({
        writes: now.writes - syscallsAtStart[i]!.writes,
        reads: now.reads - syscallsAtStart[i]!.reads,
      }),
    );
    await sleep(1_000);
    console.log(`${subscribed} lifecycles with a listen watcher (not timed)`);
    console.log(`${done} lifecycles in ${seconds} s: ${(done / seconds).toFixed(1)}/s`);
    const lifecycles = done + subscribed;
    console.log(
      `all ${lifecycles} lifecycles: ${(lifecycles / seconds).toFixed(1)}/s; gateway CPU ${gatewayCpuMs.toFixed(0)} ms, ${(gatewayCpuMs / lifecycles).toFixed(2)} ms per lifecycle`,
    );
    const perLifecycle = (x: number) => (x / lifecycles).toFixed(2);
    if (backendCpuMs !== undefined)
      console.log(
        `Postgres backends of the gateway's and worker's pools: CPU ${backendCpuMs.toFixed(0)} ms, ${perLifecycle(backendCpuMs)} ms per lifecycle`,
      );
    console.log(
      `machine ${(machineCpu.busy * 100).toFixed(0)} % busy; CPU ms per lifecycle: ${Object.entries(
        machineCpu.ms,
      )
        .map(([name, ms]) => `${name} ${perLifecycle(ms)}`)
        .join(', ')}`,
    );
    console.log(
      `write / read syscalls per lifecycle: gateway ${perLifecycle(syscalls[0]!.writes)} / ${perLifecycle(syscalls[0]!.reads)}, worker ${perLifecycle(syscalls[1]!.writes)} / ${perLifecycle(syscalls[1]!.reads)}`,
    );
    console.log(describeHops(hops, lifecycles, 'lifecycle'));
    const databaseName = probe.database.connectionString.split('/').pop()!;
    console.log(`deadlocks (the server log's, this database): ${deadlocksLogged(databaseName)}`);
    for (const stage of STAGES)
      console.log(
        `  ${stage.padEnd(9)} p50 ${median(times[stage]).toFixed(1)} ms  p90 ${p90(times[stage]).toFixed(1)} ms`,
      );
    const monitor = new pg.Client({ connectionString: probe.database.connectionString });
    await monitor.connect();
    try {
      const { rows } = await monitor.query<{ kind: string; n: string; gap_ms: string }>(
        `SELECT kind, count(*) AS n,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY gap) AS gap_ms
           FROM (SELECT kind, extract(epoch FROM at - lag(at) OVER (PARTITION BY task_id ORDER BY id)) * 1000 AS gap
                   FROM task_events) e
          GROUP BY kind ORDER BY n DESC`,
      );
      const tasks = Number(
        (await monitor.query<{ n: string }>('SELECT count(*) AS n FROM tasks')).rows[0]!.n,
      );
      console.log(`task_events per task (${tasks} tasks), median gap after the previous event:`);
      for (const row of rows)
        console.log(
          `  ${row.kind.padEnd(16)} ${(Number(row.n) / tasks).toFixed(2)}  ${Number(row.gap_ms).toFixed(1)} ms`,
        );
      if (logStatements) {
        const logged = loggedStatements(databaseName);
        const total = logged.reduce((sum, [, n]) => sum + n, 0);
        console.log(
          `statements per task: ${(total / tasks).toFixed(2)} in all (the watcher's "SELECT id, status" is the probe's own):`,
        );
        for (const [text, n] of logged.slice(0, 30))
          console.log(`  ${(n / tasks).toFixed(3)}  ${text}`);
      }
    } finally {
      await monitor.end();
    }
  } finally {
    await backends?.close();
    await watcher.stop();
    await http.close();
    await probe.close();
  }
}

await main();
