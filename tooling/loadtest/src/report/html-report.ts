import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { CheckResult } from '../check/checker.js';
import { renderChaosRounds, renderNeverRan } from './chaos-coverage.js';
import type { RunSummary } from './summary.js';
import type { Timeline } from './timeline.js';

const require = createRequire(import.meta.url);

/** uPlot's own build, inlined so the report opens offline from a file. */
export function uplotAssets(): { script: string; css: string } {
  const dist = (file: string) => readFileSync(require.resolve(`uplot/dist/${file}`), 'utf8');
  return { script: dist('uPlot.iife.min.js'), css: dist('uPlot.min.css') };
}

export const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** JSON that can sit inside a <script> element. */
export const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

function summaryRows(summary: RunSummary): [string, string][] {
  const l = (x: RunSummary['createLatency']) =>
    x.count === 0
      ? '-'
      : `p50 ${x.p50.toFixed(2)} ms, p95 ${x.p95.toFixed(2)} ms, p99 ${x.p99.toFixed(2)} ms`;
  return [
    ['tasks created', String(summary.created)],
    ['completed', String(summary.completed)],
    ['cancelled', String(summary.cancelled)],
    ['failed', String(summary.failed)],
    ['lost (must be 0)', String(summary.lost)],
    ['never terminal', String(summary.unfinished)],
    ['violations', String(summary.violations)],
    ['re-executed steps', String(summary.reExecutions)],
    ['stale tails (past lease, writes fenced)', String(summary.staleTails)],
    ['create latency', l(summary.createLatency)],
    ['end-to-end latency', l(summary.endToEndLatency)],
    ...Object.entries(summary.startLatencyByTenant).map(([tenant, latency]): [string, string] => [
      `create → first step, tenant ${tenant}`,
      l(latency),
    ]),
    ['tasks/s', summary.tasksPerSecond.toFixed(1)],
    ...Object.entries(summary.errorsByCode).map(([code, n]): [string, string] => [
      `errors ${code}`,
      String(n),
    ]),
    ...Object.entries(summary.answers.byPlan).map(([plan, counts]): [string, string] => [
      `answers during ${plan}`,
      Object.entries(counts)
        .map(([kind, n]) => `${kind}: ${n}`)
        .join(', '),
    ]),
    ...summary.answers.outages.map((o): [string, string] => [
      `store outage ${o.event.id} (${o.event.action})`,
      `first create after ${o.firstCreateMs === null ? 'none' : `${Math.round(o.firstCreateMs)} ms`}; answers until then: ${
        Object.entries(o.answers)
          .map(([kind, n]) => `${kind}: ${n}`)
          .join(', ') || '-'
      }`,
    ]),
  ];
}

/** Draws each chaos event as a labelled vertical line on every chart. */
const CLIENT_SCRIPT = `
const data = JSON.parse(document.getElementById('report-data').textContent);
const t = data.timeline;
function chaosMarkers() {
  return { hooks: { draw: [(u) => {
    const ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = '#d62728'; ctx.fillStyle = '#d62728';
    ctx.setLineDash([6, 4]); ctx.lineWidth = 1.5 * devicePixelRatio;
    ctx.font = (11 * devicePixelRatio) + 'px sans-serif';
    for (const e of t.chaos) {
      const x = Math.round(u.valToPos(e.x, 'x', true));
      ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
      ctx.fillText(e.id, x + 3, u.bbox.top + 12 * devicePixelRatio);
    }
    ctx.restore();
  }] } };
}
function chart(id, title, yLabel, series, values) {
  const el = document.getElementById(id);
  new uPlot({
    title, width: Math.min(1100, window.innerWidth - 40), height: 260,
    plugins: [chaosMarkers()],
    scales: { x: { time: false } },
    axes: [{ label: 'seconds since start' }, { label: yLabel }],
    series: [{ label: 's' }, ...series],
  }, [t.x, ...values], el);
}
chart('throughput', 'Throughput', 'tasks/s', [
  { label: 'created/s', stroke: '#1f77b4', width: 2 },
  { label: 'terminal/s', stroke: '#2ca02c', width: 2 },
], [t.createdPerS, t.completedPerS]);
chart('latency', 'Create latency', 'ms', [
  { label: 'p50', stroke: '#9467bd', width: 2 },
  { label: 'p99', stroke: '#ff7f0e', width: 2 },
], [t.createP50Ms, t.createP99Ms]);
chart('errors', 'Errors', 'errors/s', [
  { label: 'errors/s', stroke: '#d62728', width: 2 },
], [t.errorsPerS]);
`;

/** A single HTML file: the summary, the violations and three charts, uPlot inlined. */
export function renderHtmlReport(
  summary: RunSummary,
  timeline: Timeline,
  check: CheckResult,
): string {
  const { script, css } = uplotAssets();
  const rows = summaryRows(summary)
    .map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`)
    .join('');
  const chaosRows = summary.recoveries
    .map(
      (r) =>
        `<tr><td>${escapeHtml(r.event.id)}</td><td>${escapeHtml(r.event.action)}</td><td>${escapeHtml(r.event.target)}</td><td>${r.affected}</td><td>${r.recovered}</td><td>${r.latency.count === 0 ? '-' : `${r.latency.p50.toFixed(0)} ms`}</td><td>${r.latency.count === 0 ? '-' : `${r.latency.max.toFixed(0)} ms`}</td></tr>`,
    )
    .join('');
  const warning = summary.chaos === undefined ? undefined : renderNeverRan(summary.chaos);
  const chaosRounds =
    summary.chaos === undefined
      ? ''
      : `<p>${escapeHtml(renderChaosRounds(summary.chaos))}</p>${warning === undefined ? '' : `<p class="bad">${escapeHtml(warning)}</p>`}`;
  const slowRows = summary.slowest
    .map(
      (t) =>
        `<tr><td>${escapeHtml(t.taskId)}</td><td>${escapeHtml(t.tool ?? '-')}</td><td>${escapeHtml(t.status ?? 'never terminal')}</td><td>${t.ms.toFixed(0)} ms</td><td><code>${escapeHtml(t.traceId ?? '-')}</code></td></tr>`,
    )
    .join('');
  const violations = check.violations
    .map(
      (v) =>
        `<li><b>${escapeHtml(v.kind)}</b> ${escapeHtml(v.taskIds.join(', '))}: ${escapeHtml(v.message)}${v.chaos.length > 0 ? ` (around ${escapeHtml(v.chaos.map((e) => e.id).join(', '))})` : ''}</li>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mcp-tasks load test report</title>
<style>${css}
body{font-family:system-ui,sans-serif;margin:20px;color:#222}
.u-wrap+.u-legend,#throughput,#latency,#errors{margin-bottom:18px}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
.verdict{font-size:1.3em;font-weight:bold}.ok{color:#2ca02c}.bad{color:#d62728}
</style></head><body>
<h1>mcp-tasks load test</h1>
<p class="verdict ${check.ok ? 'ok' : 'bad'}">${check.ok ? 'checker passed' : `checker failed: ${check.violations.length} violation(s)`}</p>
<table>${rows}</table>
<div id="throughput"></div><div id="latency"></div><div id="errors"></div>
<h2>Chaos events and recovery</h2>
${chaosRounds}
<table><tr><th>event</th><th>action</th><th>target</th><th>affected</th><th>recovered</th><th>recovery p50</th><th>max</th></tr>${chaosRows}</table>
<h2>Slowest tasks</h2>
<p>Create → terminal. With traces exported (<code>OTEL_EXPORTER_OTLP_ENDPOINT</code>), open the trace id in the backend: the client's span, the gateway's and the workers'.</p>
<table><tr><th>task</th><th>tool</th><th>status</th><th>create → terminal</th><th>trace id</th></tr>${slowRows}</table>
<h2>Violations</h2><ul>${violations || '<li>none</li>'}</ul>
<script type="application/json" id="report-data">${scriptJson({ summary, timeline })}</script>
<script>${script}</script>
<script>${CLIENT_SCRIPT}</script>
</body></html>
`;
}

/** Writes `DIR/index.html` and returns its path. */
export async function writeHtmlReport(
  dir: string,
  summary: RunSummary,
  timeline: Timeline,
  check: CheckResult,
): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'index.html');
  await writeFile(path, renderHtmlReport(summary, timeline, check));
  return path;
}
