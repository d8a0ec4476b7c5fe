import { readFileSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { syntheticRun } from '../../test/synthetic-history.js';
import { checkHistory } from '../check/checker.js';
import type { HistoryRecord } from '../history/records.js';
import { writeHtmlReport } from './html-report.js';
import { createRunProgress } from './progress.js';
import { renderSummaryTable } from './summary-table.js';
import { summarizeRun } from './summary.js';
import { buildTimeline } from './timeline.js';

const { records } = syntheticRun();
const check = checkHistory(records);
const summary = summarizeRun(records, check);

describe('the run summary', () => {
  it('counts tasks, latencies, errors and the recovery after the kill', () => {
    expect(check.violations).toEqual([]);
    expect(summary).toMatchObject({
      created: 200,
      completed: 200,
      cancelled: 0,
      failed: 0,
      lost: 0,
      unfinished: 0,
      violations: 0,
      reExecutions: 1,
      errorsByCode: { 'transport: ECONNREFUSED': 5 },
    });
    // The builder answers every create 5 ms after it was sent.
    expect(summary.createLatency.count).toBe(200);
    expect(summary.createLatency.p50).toBeCloseTo(5, 1);
    expect(summary.createLatency.p99).toBeCloseTo(5, 1);
    // 199 tasks end 65 ms after their create; the retaken one (created at 7.9 s, seen completed at 9.605 s) 1705 ms after.
    expect(summary.endToEndLatency.p50).toBeCloseTo(65, 0);
    expect(summary.endToEndLatency.max).toBeCloseTo(1_705, -1);
    // Every task's first step starts 20 ms after its create (the retaken one's 90 ms after).
    expect(Object.keys(summary.startLatencyByTenant)).toEqual(['acme']);
    expect(summary.startLatencyByTenant.acme).toMatchObject({ count: 200 });
    expect(summary.startLatencyByTenant.acme!.p50).toBeCloseTo(20, 0);
    expect(summary.startLatencyByTenant.acme!.max).toBeCloseTo(90, 0);
    expect(summary.tasksPerSecond).toBeCloseTo(200 / 19.96, 1);
    expect(summary.recoveries).toHaveLength(1);
    expect(summary.recoveries[0]).toMatchObject({ affected: 1, recovered: 1 });
    expect(summary.recoveries[0]!.latency.p50).toBeCloseTo(1_500, -1);
  });

  it('lists the slowest tasks, slowest first, with no trace id when the run exported none', () => {
    expect(summary.slowest).toHaveLength(5);
    // The retaken task is the slowest; the others all took 65 ms.
    expect(summary.slowest[0]).toMatchObject({ status: 'completed', traceId: undefined });
    expect(summary.slowest[0]!.ms).toBeCloseTo(1_705, -1);
    expect(summary.slowest[1]!.ms).toBeCloseTo(65, 0);
  });

  it("names each slow task's trace when its create recorded one", () => {
    const slowId = summary.slowest[0]!.taskId;
    const traceId = 'ab'.repeat(16);
    const create = records.find(
      (r) => r.kind === 'reply' && r.method === 'tools/call' && r.taskId === slowId,
    )!;
    const withTrace = records.map((r) =>
      r.kind === 'request' && r.op === (create as { op: number }).op ? { ...r, traceId } : r,
    );
    const slowest = summarizeRun(withTrace, checkHistory(withTrace)).slowest;
    expect(slowest[0]).toMatchObject({ taskId: slowId, traceId });
    expect(slowest.slice(1).map((t) => t.traceId)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(renderSummaryTable({ ...summary, slowest })).toMatch(
      new RegExp(`${slowId}.*completed.*${traceId}`),
    );
  });

  it('prints the table with every figure the issue lists', () => {
    const table = renderSummaryTable(summary);
    for (const label of [
      'tasks created',
      'completed',
      'cancelled',
      'failed',
      'lost (must be 0)',
      'violations',
      'create latency',
      'end-to-end latency',
      'create → first step, tenant acme',
      'tasks/s',
      'transport: ECONNREFUSED',
      'kill-worker-1',
    ])
      expect(table).toContain(label);
    expect(table).toMatch(/create latency\s*│\s*p50 5\.00 ms {2}p95 5\.00 ms {2}p99 5\.00 ms/);
  });
});

describe('the HTML report', () => {
  it('is one self-contained file with uPlot inlined, the series and the chaos markers', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loadtest-report-'));
    const timeline = buildTimeline(records, check);
    const path = await writeHtmlReport(dir, summary, timeline, check);
    const html = await readFile(path, 'utf8');
    const uplot = readFileSync(
      createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'),
      'utf8',
    );
    expect(html).toContain(uplot);
    // Nothing is fetched: no external script or style, no address outside uPlot's licence line.
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/);
    expect(html.replace(uplot, '')).not.toMatch(/https?:\/\//);
    const data = JSON.parse(/id="report-data">(.*?)<\/script>/s.exec(html)![1]!) as {
      timeline: typeof timeline;
    };
    expect(data.timeline.chaos).toEqual([{ x: 8, id: 'kill-worker-1', label: 'kill w-1' }]);
    expect(data.timeline.x).toHaveLength(timeline.x.length);
    // Ten creates a second for 20 s, then nothing until the final reads.
    expect(data.timeline.createdPerS.slice(0, 20)).toEqual(Array(20).fill(10));
    expect(data.timeline.errorsPerS[8]).toBe(5);
    expect(data.timeline.createP50Ms[0]).toBeCloseTo(5, 1);
    expect(html).toContain('checker passed');
  });
});

describe('the chaos coverage', () => {
  // Written once the chaos stopped: at the end of the synthetic run.
  const lastT = Math.max(...records.flatMap((r) => ('t' in r ? [r.t] : [])));
  const withRounds = (plans: { plan: string; rounds: number }[]): HistoryRecord[] => [
    ...records,
    { kind: 'chaos-rounds', t: lastT, plans },
  ];
  const shortRun = withRounds([
    { plan: 'kill-worker', rounds: 3 },
    { plan: 'pause-worker', rounds: 2 },
    { plan: 'failover', rounds: 0 },
    { plan: 'rolling', rounds: 0 },
  ]);
  const warning =
    'WARNING: chaos plans never ran (the load ended before their phase): failover, rolling; raise --tasks (or --duration) or lower --chaos-phase';

  it('prints the rounds of each plan, and warns of the plans that never ran', () => {
    const text = renderSummaryTable(summarizeRun(shortRun, checkHistory(shortRun)));
    expect(text).toContain('chaos rounds: kill-worker 3, pause-worker 2, failover 0, rolling 0');
    expect(text).toContain(warning);
  });

  it('warns of nothing when every plan ran, and says nothing for a run without chaos', () => {
    const allRan = withRounds([{ plan: 'kill-worker', rounds: 1 }]);
    const text = renderSummaryTable(summarizeRun(allRan, checkHistory(allRan)));
    expect(text).toContain('chaos rounds: kill-worker 1');
    expect(text).not.toContain('WARNING');
    expect(summary.chaos).toBeUndefined();
    expect(renderSummaryTable(summary)).not.toContain('chaos rounds');
  });

  it('shows the rounds and the warning in the HTML report', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loadtest-report-'));
    const shortCheck = checkHistory(shortRun);
    const path = await writeHtmlReport(
      dir,
      summarizeRun(shortRun, shortCheck),
      buildTimeline(shortRun, shortCheck),
      shortCheck,
    );
    const html = await readFile(path, 'utf8');
    expect(html).toContain(
      '<p>chaos rounds: kill-worker 3, pause-worker 2, failover 0, rolling 0</p>',
    );
    expect(html).toContain(`<p class="bad">${warning}</p>`);
  });
});

describe('the progress bar', () => {
  it('shows finished of total with the other counts, on a non-TTY stream', () => {
    const stream = new PassThrough();
    let out = '';
    stream.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const progress = createRunProgress({ total: 200, stream, logEveryMs: 60_000 });
    progress.update({ created: 180, finished: 150, errors: 3, chaos: 2 });
    progress.stop();
    expect(out).toContain('150/200 finished | created 180 | errors 3 | chaos 2');
  });
});
