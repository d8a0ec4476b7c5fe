import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { escapeHtml, scriptJson, uplotAssets } from '../report/html-report.js';
import type { SoakOutcome, TargetResult } from './soak-targets.js';

/** The series each chart draws, per window (x is the window's end, in minutes). */
function chartData(outcome: SoakOutcome) {
  const w = outcome.windows;
  const table = (name: string) => w.map((x) => x.storage.tables[name]);
  const mb = (bytes: number | undefined) => (bytes ?? 0) / 1_048_576;
  return {
    x: w.map((x) => x.endS / 60),
    createdPerS: w.map((x) => x.createdPerS),
    terminalPerS: w.map((x) => x.terminalPerS),
    createP50: w.map((x) => x.create.p50),
    createP99: w.map((x) => x.create.p99),
    getP50: w.map((x) => x.get.p50),
    getP99: w.map((x) => x.get.p99),
    tasksHeapMb: table('tasks').map((t) => mb(t?.tableBytes)),
    tasksIndexMb: table('tasks').map((t) => mb(t?.indexBytes)),
    eventsMb: table('task_events').map((t) => mb((t?.tableBytes ?? 0) + (t?.indexBytes ?? 0))),
    live: table('tasks').map((t) => t?.liveTuples ?? 0),
    dead: table('tasks').map((t) => t?.deadTuples ?? 0),
    autovacuums: table('tasks').map((t) => t?.autovacuums ?? 0),
    expired: w.map((x) => x.swept.expired / (x.endS - x.startS)),
    deleted: w.map((x) => x.swept.deleted / (x.endS - x.startS)),
    redisMb: w.map((x) => mb(x.storage.redisUsedBytes)),
  };
}

const CLIENT_SCRIPT = `
const d = JSON.parse(document.getElementById('soak-data').textContent);
const colours = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd'];
function chart(id, title, yLabel, series) {
  new uPlot({
    title, width: Math.min(1100, window.innerWidth - 40), height: 240,
    scales: { x: { time: false } },
    axes: [{ label: 'minutes since the load started' }, { label: yLabel }],
    series: [{ label: 'min' }, ...series.map(([label], i) => ({ label, stroke: colours[i], width: 2 }))],
  }, [d.x, ...series.map(([, key]) => d[key])], document.getElementById(id));
}
chart('rate', 'Lifecycles', 'per second', [['created/s', 'createdPerS'], ['ended/s', 'terminalPerS']]);
chart('latency', 'Latency (client side)', 'ms', [['create p50', 'createP50'], ['create p99', 'createP99'], ['tasks/get p50', 'getP50'], ['tasks/get p99', 'getP99']]);
chart('size', 'Storage', 'MB', [['tasks heap', 'tasksHeapMb'], ['tasks indexes', 'tasksIndexMb'], ['task_events', 'eventsMb'], ['Redis used', 'redisMb']]);
chart('tuples', 'Tuples in tasks', 'rows', [['live', 'live'], ['dead', 'dead']]);
chart('sweeper', 'Sweeper', 'rows per second', [['expired', 'expired'], ['deleted', 'deleted']]);
chart('vacuum', 'Autovacuum runs on tasks', 'runs so far', [['autovacuums', 'autovacuums']]);
`;

/** A single HTML file: the targets, then one chart per figure over time, uPlot inlined. */
export function renderSoakReport(outcome: SoakOutcome, targets: TargetResult[]): string {
  const { script, css } = uplotAssets();
  const rows = targets
    .map(
      (t) =>
        `<tr><td>${escapeHtml(t.target)}</td><td>${escapeHtml(t.want)}</td><td>${escapeHtml(t.got)}</td><td class="${t.met ? 'ok' : 'bad'}">${t.met ? 'met' : 'missed'}</td></tr>`,
    )
    .join('');
  const met = targets.every((t) => t.met);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mcp-tasks soak report</title>
<style>${css}
body{font-family:system-ui,sans-serif;margin:20px;color:#222}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
.verdict{font-size:1.3em;font-weight:bold}.ok{color:#2ca02c}.bad{color:#d62728}
</style></head><body>
<h1>mcp-tasks soak</h1>
<p class="verdict ${met ? 'ok' : 'bad'}">${met ? 'every target met' : 'targets missed'}</p>
<table><tr><th>target</th><th>want</th><th>got</th><th></th></tr>${rows}</table>
<div id="rate"></div><div id="latency"></div><div id="size"></div><div id="tuples"></div><div id="sweeper"></div><div id="vacuum"></div>
<script type="application/json" id="soak-data">${scriptJson(chartData(outcome))}</script>
<script>${script}</script>
<script>${CLIENT_SCRIPT}</script>
</body></html>
`;
}

/** Writes `DIR/soak.html` and returns its path. */
export async function writeSoakReport(
  dir: string,
  outcome: SoakOutcome,
  targets: TargetResult[],
): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'soak.html');
  await writeFile(path, renderSoakReport(outcome, targets));
  return path;
}
