import Table from 'cli-table3';
import type { LatencySummary } from '../report/latency.js';
import type { BullmqResult } from './bullmq-noop.js';
import type { ConstantRateResult } from './constant-rate.js';
import type { EndToEndResult } from './end-to-end.js';
import type { HttpLoadResult } from './http-load.js';
import type { PgbenchResult } from './pgbench.js';

export interface BenchResults {
  pgbench: { one: PgbenchResult; eight: PgbenchResult };
  bullmq: BullmqResult;
  http: {
    honoJson: HttpLoadResult[];
    honoPg: HttpLoadResult[];
    tasksGet: HttpLoadResult[];
  };
  createAtFixedRate: ConstantRateResult;
  endToEnd: EndToEndResult[];
}

const plain = { style: { head: [], border: [] } };
const n = (value: number, digits = 0) =>
  Number.isFinite(value)
    ? value.toLocaleString('en-US', {
        maximumFractionDigits: digits,
        minimumFractionDigits: digits,
      })
    : '-';
const ms = (value: number) => `${n(value, value < 10 ? 2 : 1)} ms`;
const ratio = (ours: number, baseline: number) =>
  Number.isFinite(ours) && Number.isFinite(baseline) && baseline > 0
    ? `${n(ours / baseline, 3)}×`
    : '-';
const failureText = (f: ConstantRateResult) =>
  f.failures === 0
    ? '0'
    : `${f.failures} (${Object.entries(f.failureReasons)
        .map(([reason, count]) => `${reason}: ${count}`)
        .join(', ')})`;
const pcts = (l: LatencySummary) => `p50 ${ms(l.p50)} / p99 ${ms(l.p99)}`;

/** The measurements, one table per part (a)–(e). */
export function renderMeasurements(r: BenchResults): string {
  const a = new Table({ head: ['(a) pgbench single-row INSERT', 'tps', 'latency avg'], ...plain });
  for (const p of [r.pgbench.one, r.pgbench.eight])
    a.push([`${p.clients} client${p.clients > 1 ? 's' : ''}`, n(p.tps), ms(p.latencyMs)]);

  const b = new Table({
    head: ['(b) raw BullMQ no-op jobs (add → completed)', 'jobs/s'],
    ...plain,
  });
  b.push([`concurrency ${r.bullmq.concurrency}`, n(r.bullmq.jobsPerS)]);

  const c = new Table({
    head: ['(c) POST on @hono/node-server', 'connections', 'req/s', 'p50', 'p99', 'failures'],
    ...plain,
  });
  const rows: [string, HttpLoadResult[]][] = [
    ['bare Hono JSON', r.http.honoJson],
    ['bare Hono + pg primary-key read', r.http.honoPg],
    ['ours: tasks/get (1 gateway replica)', r.http.tasksGet],
  ];
  for (const [label, results] of rows)
    for (const x of results)
      c.push([
        label,
        String(x.connections),
        n(x.requestsPerS),
        ms(x.latency.p50),
        ms(x.latency.p99),
        String(x.failures),
      ]);

  const d = new Table({
    head: [
      '(d) ours: tools/call create at a fixed rate',
      'rate',
      'sent',
      'p50',
      'p95',
      'p99',
      'failures',
    ],
    ...plain,
  });
  const f = r.createAtFixedRate;
  d.push([
    '1 gateway + 1 worker',
    `${f.ratePerS}/s`,
    String(f.sent),
    ms(f.latency.p50),
    ms(f.latency.p95),
    ms(f.latency.p99),
    failureText(f),
  ]);

  const e = new Table({
    head: [
      '(e) ours: end-to-end no-input tasks',
      'clients',
      'tasks/s',
      'PG commits/task',
      'gateway CPU ms/task',
      'worker CPU ms/task',
      'tasks',
      'failures',
    ],
    ...plain,
  });
  for (const x of r.endToEnd)
    e.push([
      `${x.gateways} gateway${x.gateways > 1 ? 's' : ''} + ${x.workers} worker${x.workers > 1 ? 's' : ''}`,
      String(x.concurrency),
      n(x.tasksPerS, 1),
      n(x.commitsPerTask, 2),
      n(x.gatewayCpuMsPerTask, 2),
      n(x.workerCpuMsPerTask, 2),
      String(x.tasks),
      String(x.failures),
    ]);
  return [a, b, c, d, e].map((t) => t.toString()).join('\n');
}

/** Ours next to its same-run baseline, as the ratio ours ÷ baseline (the rows of issue 12's table). */
export function renderComparisons(r: BenchResults): string {
  const t = new Table({
    head: ['comparison', 'ours', 'baseline (same run)', 'ours ÷ baseline'],
    ...plain,
  });
  const e2e1 = r.endToEnd.find((x) => x.gateways === 1);
  const e2e2 = r.endToEnd.find((x) => x.gateways === 2);
  const pg8 = r.pgbench.eight.tps;
  for (const x of [e2e1, e2e2]) {
    if (x === undefined) continue;
    t.push([
      `end-to-end no-input tasks/s, ${x.gateways}+${x.workers}, concurrency ${x.concurrency}`,
      n(x.tasksPerS, 1),
      `pgbench INSERT 8 clients: ${n(pg8)} tps`,
      ratio(x.tasksPerS, pg8),
    ]);
    t.push([
      `end-to-end no-input tasks/s, ${x.gateways}+${x.workers}`,
      n(x.tasksPerS, 1),
      `raw BullMQ no-op: ${n(r.bullmq.jobsPerS)} jobs/s`,
      ratio(x.tasksPerS, r.bullmq.jobsPerS),
    ]);
  }
  const create = r.createAtFixedRate.latency;
  const pg1 = r.pgbench.one.latencyMs;
  t.push([
    `tools/call create p50 at ${r.createAtFixedRate.ratePerS}/s`,
    ms(create.p50),
    `pgbench INSERT 1 client: ${ms(pg1)}`,
    ratio(create.p50, pg1),
  ]);
  t.push([
    `tools/call create p99 at ${r.createAtFixedRate.ratePerS}/s`,
    ms(create.p99),
    `pgbench INSERT 1 client: ${ms(pg1)}`,
    ratio(create.p99, pg1),
  ]);
  for (const ours of r.http.tasksGet) {
    const pg = r.http.honoPg.find((x) => x.connections === ours.connections);
    const json = r.http.honoJson.find((x) => x.connections === ours.connections);
    if (pg !== undefined)
      t.push([
        `tasks/get req/s per replica, ${ours.connections} conn`,
        n(ours.requestsPerS),
        `bare Hono + pg PK read: ${n(pg.requestsPerS)}`,
        ratio(ours.requestsPerS, pg.requestsPerS),
      ]);
    if (json !== undefined)
      t.push([
        `tasks/get req/s per replica, ${ours.connections} conn`,
        n(ours.requestsPerS),
        `bare Hono JSON: ${n(json.requestsPerS)}`,
        ratio(ours.requestsPerS, json.requestsPerS),
      ]);
    if (pg !== undefined)
      t.push([
        `tasks/get p50 / p99, ${ours.connections} conn`,
        pcts(ours.latency),
        `Hono + pg: ${pcts(pg.latency)}`,
        `${ratio(ours.latency.p50, pg.latency.p50)} / ${ratio(ours.latency.p99, pg.latency.p99)}`,
      ]);
  }
  for (const x of [e2e1, e2e2]) {
    if (x === undefined) continue;
    t.push([
      `gateway CPU ms per created task, ${x.gateways}+${x.workers}`,
      n(x.gatewayCpuMsPerTask, 2),
      '—',
      '—',
    ]);
    t.push([
      `worker CPU ms per one-step task, ${x.gateways}+${x.workers}`,
      n(x.workerCpuMsPerTask, 2),
      '—',
      '—',
    ]);
    t.push([
      `Postgres commits per task, ${x.gateways}+${x.workers}`,
      n(x.commitsPerTask, 2),
      '—',
      '—',
    ]);
  }
  return t.toString();
}
