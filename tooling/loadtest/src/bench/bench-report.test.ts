import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderComparisons, renderMeasurements, type BenchResults } from './bench-report.js';
import {
  busyShare,
  cpuNsOfRunning,
  machineCpuTicks,
  pidsNamed,
  mainThreadSwitches,
  processCpuMs,
  processIoSyscalls,
  sumOverProcesses,
  tcpSegmentsSent,
} from './cpu.js';
import { FIGURES, parseFigureList, selectFigures } from './figures.js';
import { commandDeltas, parseCommandstats } from './redis-commandstats.js';

const latency = (p50: number, p99: number) => ({ count: 100, p50, p95: p99, p99, max: p99 });
const http = (connections: number, requestsPerS: number, serverCpuUsPerRequest?: number) => ({
  connections,
  requestsPerS,
  latency: latency(1, 4),
  failures: 0,
  ...(serverCpuUsPerRequest === undefined ? {} : { serverCpuUsPerRequest }),
});
const results: BenchResults = {
  pgbench: {
    one: { clients: 1, tps: 6_000, latencyMs: 0.16 },
    eight: { clients: 8, tps: 16_000, latencyMs: 0.5 },
  },
  bullmq: { jobsPerS: 4_000, concurrency: 32 },
  hono: {
    json: [http(1, 9_000), http(32, 12_000)],
    pg: [http(1, 3_000, 150), http(32, 4_000, 120)],
  },
  tasksGet: [http(1, 500, 400), http(32, 2_600, 240)],
  createAtFixedRate: {
    ratePerS: 200,
    sent: 2_000,
    latency: latency(47, 135),
    failures: 3,
    failureReasons: { 'HTTP 503': 2, ECONNRESET: 1 },
  },
  endToEnd: [
    {
      gateways: 1,
      workers: 1,
      concurrency: 32,
      tasksPerS: 120,
      commitsPerTask: 8,
      redisCommandsPerTask: 12.5,
      redisCommands: [
        { command: 'evalsha', perTask: 6 },
        { command: 'set', perTask: 1 },
      ],
      gatewayCpuMsPerTask: 5,
      workerCpuMsPerTask: 2.8,
      clientCpuMsPerTask: 0.4,
      gatewaySwitchesPerTask: { sleeps: 0.42, preempted: 0.1 },
      workerSwitchesPerTask: { sleeps: 0.61, preempted: 0.12 },
      gatewaySyscallsPerTask: { reads: 3.1, writes: 4.2 },
      workerSyscallsPerTask: { reads: 2.5, writes: 3.3 },
      tcpSegmentsPerTask: 9.5,
      machineBusy: 0.552,
      tasks: 1_200,
      failures: 0,
    },
    {
      gateways: 2,
      workers: 2,
      concurrency: 32,
      tasksPerS: 150,
      commitsPerTask: 8,
      redisCommandsPerTask: 12.5,
      redisCommands: [
        { command: 'evalsha', perTask: 6 },
        { command: 'set', perTask: 1 },
      ],
      gatewayCpuMsPerTask: 6,
      workerCpuMsPerTask: 3.5,
      clientCpuMsPerTask: 0.5,
      gatewaySwitchesPerTask: { sleeps: 1.5, preempted: 0.75 },
      workerSwitchesPerTask: { sleeps: 2.25, preempted: 0.5 },
      gatewaySyscallsPerTask: { reads: 6.25, writes: 8.5 },
      workerSyscallsPerTask: { reads: 5, writes: 7.75 },
      tcpSegmentsPerTask: 19,
      machineBusy: 0.97,
      tasks: 1_500,
      failures: 0,
    },
    {
      gateways: 2,
      workers: 2,
      concurrency: 64,
      tasksPerS: 230,
      commitsPerTask: 7,
      redisCommandsPerTask: 13,
      redisCommands: [{ command: 'evalsha', perTask: 6 }],
      gatewayCpuMsPerTask: 5.5,
      workerCpuMsPerTask: 4,
      clientCpuMsPerTask: 0.45,
      gatewaySwitchesPerTask: { sleeps: 0.8, preempted: 0.4 },
      workerSwitchesPerTask: { sleeps: 1, preempted: 0.3 },
      gatewaySyscallsPerTask: { reads: 4, writes: 5 },
      workerSyscallsPerTask: { reads: 3, writes: 4 },
      tcpSegmentsPerTask: 11.4,
      machineBusy: Number.NaN,
      tasks: 2_300,
      failures: 0,
    },
  ],
};

describe('the bench report', () => {
  it("prints each of issue 12's comparisons with ours ÷ the same-run baseline", () => {
    const table = renderComparisons(results);
    const row = (label: string) => table.split('\n').find((line) => line.includes(label)) ?? '';
    expect(row('end-to-end no-input tasks/s, 1+1, concurrency 32')).toMatch(
      /120\.0.*pgbench INSERT 8 clients: 16,000 tps.*0\.008×/,
    );
    expect(row('tools/call create p50 at 200/s')).toMatch(
      /47\.0 ms.*pgbench INSERT 1 client: 0\.16 ms.*293\.750×/,
    );
    expect(row('tools/call create p99 at 200/s')).toMatch(/135\.0 ms/);
    expect(table).toMatch(
      /tasks\/get req\/s per replica, 32 conn.*2,600.*bare Hono \+ pg PK read: 4,000.*0\.650×.*≥ 0\.6×.*met/,
    );
    expect(table).toMatch(
      /tasks\/get req\/s per replica, 1 conn.*500.*bare Hono \+ pg PK read: 3,000.*0\.167×.*≥ 0\.6×.*NOT met/,
    );
    expect(row('gateway CPU ms per created task, 1+1')).toMatch(/5\.00.*≤ 1 ms.*NOT met/);
    expect(row('worker CPU ms per one-step task, 1+1')).toMatch(/2\.80.*≤ 1 ms.*NOT met/);
    expect(row('end-to-end no-input tasks/s, 1+1, concurrency 32')).toMatch(/≥ 0\.06×.*NOT met/);
    expect(row('tools/call create p50 at 200/s')).toMatch(/≤ 3 ms.*NOT met/);
    expect(row('tools/call create p99 at 200/s')).toMatch(/≤ 15 ms.*NOT met/);
    expect(row('round trips per task, 1+1')).toMatch(/8\.00 · 12\.5/);
    expect(row('tasks/get server CPU per request, 32 conn')).toMatch(
      /240 µs.*bare Hono \+ pg: 120 µs.*2\.000×/,
    );
    expect(row('raw BullMQ')).toMatch(/0\.030×/);
  });

  it("judges issue 30's targets: scale-out with the same clients, Redis commands, raw BullMQ", () => {
    const table = renderComparisons(results);
    const row = (label: string) => table.split('\n').find((line) => line.includes(label)) ?? '';
    const same = '2+2 ÷ 1+1, 32 ÷ 32 clients';
    expect(row(`scale-out: end-to-end tasks/s, ${same}`)).toMatch(
      /150\.0.*1\+1: 120\.0.*1\.250×.*≥ 0\.9×.*│ met/,
    );
    expect(row(`scale-out: gateway CPU ms/task, ${same}`)).toMatch(
      /6\.00.*1\+1: 5\.00.*1\.200×.*≤ 1\.3×.*│ met/,
    );
    expect(row(`scale-out: worker CPU ms/task, ${same}`)).toMatch(
      /3\.50.*1\+1: 2\.80.*1\.250×.*≤ 1\.3×.*│ met/,
    );
    // Twice the clients: shown next to 1 + 1, not judged.
    const wide = '2+2 ÷ 1+1, 64 ÷ 32 clients';
    expect(row(`scale-out: end-to-end tasks/s, ${wide}`)).toMatch(/230\.0.*1\.917×.*—.*—/);
    expect(row(`scale-out: worker CPU ms/task, ${wide}`)).toMatch(/4\.00.*1\.429×.*—.*—/);
    // The messages per task, shown at both shapes, never judged.
    expect(row(`scale-out: TCP segments/task (whole machine), ${same}`)).toMatch(
      /19\.0.*1\+1: 9\.5.*2\.000×.*—.*—/,
    );
    expect(row(`scale-out: TCP segments/task (whole machine), ${wide}`)).toMatch(
      /11\.4.*1\+1: 9\.5.*1\.200×.*—.*—/,
    );
    expect(row('Redis commands per task, 1+1')).toMatch(/12\.5.*≤ 15.*│ met/);
    expect(table).not.toContain('Redis commands per task, 2+2');
    expect(row('end-to-end no-input tasks/s, 1+1 ')).toMatch(
      /raw BullMQ no-op: 4,000 jobs\/s.*0\.030×.*≥ 0\.15×.*NOT met/,
    );
    expect(row('end-to-end no-input tasks/s, 2+2 ')).toMatch(/0\.038×.*—.*—/);
  });

  it('divides the 1 + 1 line by raw BullMQ measured beside it when it was', () => {
    const beside = {
      before: { jobsPerS: 1_000, concurrency: 32, tcpSegmentsPerJob: 4.25 },
      after: { jobsPerS: 600, concurrency: 32 },
    };
    const table = renderComparisons({ ...results, bullmqBesideEndToEnd: beside });
    const row = (label: string) => table.split('\n').find((line) => line.includes(label)) ?? '';
    // 120 ÷ mean(1,000, 600) = 0.150: met, where (b)'s 4,000 gives 0.030.
    expect(row('end-to-end no-input tasks/s, 1+1 ')).toMatch(
      /raw BullMQ no-op beside it: 1,000 before, 600 after \(mean\).*0\.150×.*≥ 0\.15×.*│ met/,
    );
    // The 2 + 2 line ran minutes later: it keeps (b).
    expect(row('end-to-end no-input tasks/s, 2+2 ')).toMatch(
      /raw BullMQ no-op: 4,000 jobs\/s.*0\.038×/,
    );
    const measured = renderMeasurements({ ...results, bullmqBesideEndToEnd: beside });
    // With the segments per job where the result has them (older results do not).
    expect(measured).toContain('TCP segments/job (whole machine, at most)');
    expect(measured).toMatch(/right before the 1\+1 end-to-end line\s*│ 1,000\s*│ 4\.3 /);
    expect(measured).toMatch(/right after it\s*│ 600\s*│ — /);
  });

  it('judges a 2 + 2 line that costs over 1.3× per task as not met', () => {
    const [one, two] = results.endToEnd!;
    const table = renderComparisons({
      endToEnd: [one!, { ...two!, tasksPerS: 60, gatewayCpuMsPerTask: 15 }],
    });
    expect(table).toMatch(/scale-out: end-to-end tasks\/s, 2\+2 ÷ 1\+1.*0\.500×.*≥ 0\.9×.*NOT met/);
    expect(table).toMatch(
      /scale-out: gateway CPU ms\/task, 2\+2 ÷ 1\+1.*3\.000×.*≤ 1\.3×.*NOT met/,
    );
  });

  it('prints every measurement (a)–(e)', () => {
    const table = renderMeasurements(results);
    for (const part of [
      '(a) pgbench',
      '(b) raw BullMQ',
      '(c) POST on @hono/node-server',
      '(d) ours',
      '(e) ours',
    ])
      expect(table).toContain(part);
    expect(table).toContain('2 gateways + 2 workers');
    expect(table).toContain('3 (HTTP 503: 2, ECONNRESET: 1)');
    expect(table).toContain('12.5 (evalsha 6.0, set 1.0)');
    expect(table).toContain('main-thread sleeps / preemptions per task: gateway · worker');
    expect(table).toMatch(/2 gateways \+ 2 workers.*│ 1\.50 \/ 0\.75 · 2\.25 \/ 0\.50 /);
    expect(table).toContain('write / read syscalls per task: gateway · worker');
    expect(table).toMatch(
      /2 gateways \+ 2 workers.*│ 8\.5 \/ 6\.3 · 7\.8 \/ 5\.0 +│ 19\.0 +│ 97 % +│ 1500 /,
    );
    expect(table).toContain('TCP segments per task (whole machine)');
    expect(table).toContain('machine busy (all processes)');
    expect(table).toMatch(/1 gateway \+ 1 worker .*│ 9\.5 +│ 55 % +│ 1200 /);
    expect(table).toMatch(/2 gateways \+ 2 workers .*│ 11\.4 +│ — +│ 2300 /);
  });

  it('leaves out what a run did not measure, and marks a met target', () => {
    const only: BenchResults = {
      pgbench: results.pgbench,
      createAtFixedRate: { ...results.createAtFixedRate!, latency: latency(2.5, 14) },
    };
    const table = renderComparisons(only);
    expect(table).toMatch(/tools\/call create p50 at 200\/s.*2\.50 ms.*≤ 3 ms.*│ met/);
    expect(table).toMatch(/tools\/call create p99 at 200\/s.*14\.0 ms.*≤ 15 ms.*│ met/);
    expect(table).not.toContain('tasks/get');
    expect(table).not.toContain('end-to-end');
    const measured = renderMeasurements(only);
    expect(measured).toContain('(a) pgbench');
    expect(measured).not.toContain('(b) raw BullMQ');
    expect(measured).not.toContain('(e) ours');
  });
});

describe('the realistic mix table', () => {
  const [plain, realistic] = [results.endToEnd![0]!, results.endToEnd![1]!];
  const mix: BenchResults = {
    realisticMix: {
      plain,
      realistic: { ...realistic, tasksPerS: 40, clientCpuMsPerTask: 1.25, tcpSegmentsPerTask: 38 },
      createAtFixedRate: {
        ratePerS: 200,
        sent: 2_000,
        latency: { count: 2_000, p50: 2, p95: 5, p99: 11, max: 14 },
        failures: 0,
        failureReasons: {},
      },
    },
  };

  it("shows the bench client's own CPU per task beside the gateway's and the worker's", () => {
    const table = renderMeasurements(mix);
    const row = (label: string) => table.split('\n').find((line) => line.includes(label)) ?? '';
    expect(table).toMatch(/gateway CPU ms\/task.*worker CPU ms\/task.*bench client's CPU ms\/task/);
    expect(row('no input (failing_job)')).toMatch(/120\.0.*5\.00.*2\.80.*0\.40.*8\.00/);
    expect(row('realistic (realistic_workflow)')).toMatch(/40\.0.*6\.00.*3\.50.*1\.25.*8\.00/);
  });

  it('shows the messages a task costs the whole machine, and their ratio beside the rate ratio', () => {
    const measured = renderMeasurements(mix);
    const line = (table: string, label: string) =>
      table.split('\n').find((text) => text.includes(label)) ?? '';
    expect(measured).toContain('TCP segments/task (whole machine)');
    expect(line(measured, 'no input (failing_job)')).toMatch(/12\.5 +│ 9\.5 /);
    expect(line(measured, 'realistic (realistic_workflow)')).toMatch(/12\.5 +│ 38\.0 /);
    const compared = renderComparisons(mix);
    expect(line(compared, 'TCP segments/task (whole machine), no-input ÷ realistic')).toMatch(
      /38\.0.*no-input, same stack: 9\.5.*0\.250×.*—.*—/,
    );
  });
});

describe('--only', () => {
  it('brings the baselines a figure of ours is compared with', () => {
    expect([...selectFigures(['tasks-get'])].sort()).toEqual(['hono', 'tasks-get']);
    expect([...selectFigures(['e2e', 'create'])].sort()).toEqual([
      'bullmq',
      'create',
      'e2e',
      'pgbench',
    ]);
    expect(selectFigures(undefined).size).toBe(FIGURES.length);
  });

  it('refuses an unknown figure, naming it and the known ones', () => {
    expect(() => parseFigureList('tasks-get,tasksget')).toThrow(
      "unknown figure 'tasksget'; pick from pgbench, bullmq, hono, tasks-get, create, e2e",
    );
    expect(parseFigureList('e2e, hono')).toEqual(['e2e', 'hono']);
  });
});

describe('Redis round trips', () => {
  it('reads calls per command from INFO commandstats and takes deltas, largest first', () => {
    const before = parseCommandstats(
      '# Commandstats\r\ncmdstat_set:calls=10,usec=20,usec_per_call=2.00\r\ncmdstat_evalsha:calls=5,usec=50\r\n',
    );
    expect(before).toEqual({ set: 10, evalsha: 5 });
    const after = { set: 12, evalsha: 35, 'client|setname': 1 };
    expect(commandDeltas(before, after)).toEqual([
      { command: 'evalsha', calls: 30 },
      { command: 'set', calls: 2 },
      { command: 'client|setname', calls: 1 },
    ]);
  });
});

describe('pidsNamed and cpuNsOfRunning', () => {
  it('finds this process by its command name and reads its CPU, leaving out a pid that is gone', () => {
    const name = readFileSync(`/proc/${process.pid}/comm`, 'utf8').trim();
    expect(pidsNamed(name)).toContain(process.pid);
    expect(pidsNamed('no-such-process-name')).toEqual([]);
    const gone = 2 ** 22 + 1; // above the kernel's largest pid
    const cpu = cpuNsOfRunning([process.pid, gone]);
    expect([...cpu.keys()]).toEqual([process.pid]);
    expect(cpu.get(process.pid)).toBeGreaterThan(0);
  });
});

describe('tcpSegmentsSent', () => {
  it("reads Tcp OutSegs by its column's name, and grows once this process talks TCP", async () => {
    const snmp =
      'Ip: Forwarding DefaultTTL\nIp: 1 64\n' +
      'Tcp: RtoAlgorithm ActiveOpens InSegs OutSegs RetransSegs\nTcp: 1 7204 1888245 1883848 409\n';
    expect(tcpSegmentsSent(snmp)).toBe(1_883_848);
    expect(() => tcpSegmentsSent('Ip: Forwarding\nIp: 1\n')).toThrow(
      'no Tcp OutSegs in /proc/net/snmp',
    );
    const before = tcpSegmentsSent();
    const server = createServer((socket) => socket.end('pong'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.on('close', resolve).resume());
    server.close();
    // The handshake, the pong and the closing FINs: several segments, both ends on this machine.
    expect(tcpSegmentsSent() - before).toBeGreaterThanOrEqual(4);
  });
});

describe('processCpuMs', () => {
  it('reads a growing user+system time for this process', () => {
    const before = processCpuMs(process.pid);
    const until = Date.now() + 100;
    while (Date.now() < until); // spin: a CPU-bound wait
    expect(processCpuMs(process.pid)).toBeGreaterThan(before);
  });
});

describe('mainThreadSwitches', () => {
  it('counts the main thread going to sleep: each timer waited for adds at least one', async () => {
    const before = mainThreadSwitches(process.pid);
    for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    const after = mainThreadSwitches(process.pid);
    expect(after.sleeps - before.sleeps).toBeGreaterThanOrEqual(5);
    expect(after.preempted).toBeGreaterThanOrEqual(before.preempted);
  });

  it('names the file when the process has no such thread', () => {
    expect(() => mainThreadSwitches(2 ** 22 + 1)).toThrow(/\/proc\/4194305\/task\/4194305\/status/);
  });
});

describe('processIoSyscalls', () => {
  it('counts each write system call the process makes', () => {
    const file = openSync(join(tmpdir(), `syscalls-${process.pid}.txt`), 'w');
    try {
      const before = processIoSyscalls(process.pid);
      for (let i = 0; i < 20; i += 1) writeSync(file, 'x');
      const after = processIoSyscalls(process.pid);
      expect(after.writes - before.writes).toBeGreaterThanOrEqual(20);
      expect(after.reads).toBeGreaterThanOrEqual(before.reads);
    } finally {
      closeSync(file);
    }
  });

  it('names the file when there is no such process', () => {
    expect(() => processIoSyscalls(2 ** 22 + 1)).toThrow(/\/proc\/4194305\/io/);
  });
});

describe('machineCpuTicks', () => {
  it("reads the machine's busy and total ticks from /proc/stat's first line", () => {
    const stat = 'cpu  100 5 40 800 20 3 7 25 0 0\ncpu0 50 2 20 400 10 1 3 12 0 0\n';
    // busy: user, nice, system, irq, softirq; total adds idle, iowait and steal.
    expect(machineCpuTicks(stat)).toEqual({ busy: 155, total: 1000 });
    expect(busyShare({ busy: 155, total: 1000 }, { busy: 255, total: 1400 })).toBe(0.25);
    expect(busyShare({ busy: 1, total: 10 }, { busy: 1, total: 10 })).toBeNaN();
  });

  it("grows on this machine's /proc/stat while this process spins", () => {
    const before = machineCpuTicks();
    const until = Date.now() + 50;
    while (Date.now() < until);
    const after = machineCpuTicks();
    expect(after.busy).toBeGreaterThan(before.busy);
    expect(after.total).toBeGreaterThanOrEqual(after.busy - before.busy + before.total);
  });

  it('refuses a file that is not /proc/stat', () => {
    expect(() => machineCpuTicks('intr 1 2 3\n')).toThrow(/unexpected \/proc\/stat: intr 1 2 3/);
  });
});

describe('sumOverProcesses', () => {
  it('sums each field over the processes, and refuses none', () => {
    const counts: Record<number, { reads: number; writes: number }> = {
      1: { reads: 2, writes: 5 },
      2: { reads: 3, writes: 7 },
    };
    expect(sumOverProcesses([1, 2], (pid) => counts[pid]!)).toEqual({ reads: 5, writes: 12 });
    expect(() => sumOverProcesses([], (pid) => counts[pid]!)).toThrow('no process to count');
  });
});

describe('the at-size figures', () => {
  const figures = (createP99Ms: number, getRequestsPerS: number) => ({
    createP50Ms: 2,
    createP99Ms,
    createFailures: 0,
    getRequestsPerS,
    getP99Ms: 5,
  });
  const atSize = (rows: number, seqScan: boolean): BenchResults => ({
    atSize: {
      rows,
      fillSeconds: 60,
      tableBytes: 1,
      indexBytes: 1,
      rounds: [
        { empty: figures(10, 4_000), full: figures(14, 2_800) },
        { empty: figures(12, 4_100), full: figures(15, 2_900) },
        { empty: figures(9, 3_900), full: figures(13, 2_700) },
      ],
      empty: figures(10, 4_000),
      full: figures(14, 2_800),
      // The order-paired ratio (at-size.ts), not the ratio of the medians.
      createP99Ratio: 1.4,
      getRatio: 0.7,
      plans: [
        { name: 'KEDA count', indexDriven: true, milliseconds: 1, plan: [] },
        { name: 'delete batch, resumed', indexDriven: !seqScan, milliseconds: 1, plan: [] },
      ],
    },
  });
  const rowsOf = (text: string) => text.split('\n').filter((line) => line.includes('at size'));

  it('judges both ratios against the empty table of the same run, and the plans at size', () => {
    const rows = rowsOf(renderComparisons(atSize(10_000_000, true)));
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatch(
      /create p99 .* \(3 rounds in turns\) .* 14\.0 ms .* empty table: 10\.0 ms .* 1\.400× \(order-paired\) .* ≤ 1\.3× .* NOT met/,
    );
    expect(rows[1]).toMatch(
      /tasks\/get req\/s.* 2,800 .* empty table: 4,000 .* 0\.700× \(order-paired\) .* ≥ 0\.75× .* NOT met/,
    );
    expect(rows[2]).toMatch(/seq scan: delete batch, resumed .* no sequential scan .* NOT met/);
  });

  it('shows the plans of a small table without judging them', () => {
    const rows = rowsOf(renderComparisons(atSize(20_000, true)));
    expect(rows[2]).toMatch(/judged from 1,000,000 rows/);
    expect(rows[2]).not.toMatch(/NOT met/);
  });
});

describe('the tracing figures at a fixed rate', () => {
  const run = (gateway: number, worker: number) => ({
    ratePerS: 200,
    windowS: 10,
    tasks: 2_000,
    tasksPerS: 200,
    openAtEnd: 4,
    gatewayCpuMsPerTask: gateway,
    workerCpuMsPerTask: worker,
    cpuMsPerTask: gateway + worker,
    postgresCpuMsPerTask: null,
    createP50Ms: 2,
    createP99Ms: 9,
    failures: 0,
  });
  const traces: BenchResults = {
    endToEndTraces: {
      ratePerS: 200,
      together: false,
      off: [run(0.5, 0.5), run(0.6, 0.6), run(0.4, 0.6)],
      on: [run(1, 1), run(1.1, 1.3), run(0.75, 0.75)],
      ratio: { ratios: [2, 2, 1.5], median: 2, min: 1.5, max: 2 },
    },
  };

  it('prints each pair off and on with its ratio, then the medians and the ratios’ spread', () => {
    const lines = renderMeasurements(traces).split('\n');
    const row = (label: string) => lines.find((line) => line.includes(label)) ?? '';
    expect(row('at 200/s, 1 gateway + 1 worker, tracing')).toMatch(/off: gateway \/ worker/);
    expect(row('pair 1')).toMatch(
      /0\.500 \/ 0\.500 .* 1\.000 .* 1\.000 \/ 1\.000 .* 2\.000 .* 2\.000/,
    );
    expect(row('pair 3')).toMatch(
      /0\.400 \/ 0\.600 .* 1\.000 .* 0\.750 \/ 0\.750 .* 1\.500 .* 1\.500 .* 2000 \/ 2000 .* 0 \/ 0/,
    );
    expect(row('median of 3')).toMatch(
      /0\.500 \/ 0\.600 .* 1\.000 .* 1\.000 \/ 1\.000 .* 2\.000 .* 2\.000 \(1\.500–2\.000\)/,
    );
  });
});
