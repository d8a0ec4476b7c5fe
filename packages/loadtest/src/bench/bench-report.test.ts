import { describe, expect, it } from 'vitest';
import { renderComparisons, renderMeasurements, type BenchResults } from './bench-report.js';
import { processCpuMs } from './cpu.js';

const latency = (p50: number, p99: number) => ({ count: 100, p50, p95: p99, p99, max: p99 });
const http = (connections: number, requestsPerS: number) => ({
  connections,
  requestsPerS,
  latency: latency(1, 4),
  failures: 0,
});
const results: BenchResults = {
  pgbench: {
    one: { clients: 1, tps: 6_000, latencyMs: 0.16 },
    eight: { clients: 8, tps: 16_000, latencyMs: 0.5 },
  },
  bullmq: { jobsPerS: 4_000, concurrency: 32 },
  http: {
    honoJson: [http(1, 9_000), http(32, 12_000)],
    honoPg: [http(1, 3_000), http(32, 4_000)],
    tasksGet: [http(1, 500), http(32, 970)],
  },
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
      gatewayCpuMsPerTask: 5,
      workerCpuMsPerTask: 2.8,
      tasks: 1_200,
      failures: 0,
    },
    {
      gateways: 2,
      workers: 2,
      concurrency: 32,
      tasksPerS: 150,
      commitsPerTask: 8,
      gatewayCpuMsPerTask: 5,
      workerCpuMsPerTask: 2.8,
      tasks: 1_500,
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
      /tasks\/get req\/s per replica, 32 conn.*970.*bare Hono \+ pg PK read: 4,000.*0\.243×/,
    );
    expect(row('gateway CPU ms per created task, 1+1')).toMatch(/5\.00/);
    expect(row('worker CPU ms per one-step task, 1+1')).toMatch(/2\.80/);
    expect(row('raw BullMQ')).toMatch(/0\.030×/);
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
