import { Hono } from 'hono';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// Everything the console's pages load, served by the gateway itself: no CDN, no external fetch.

const require = createRequire(import.meta.url);

function uplotFile(name: string): string {
  return readFileSync(require.resolve(`uplot/dist/${name}`), 'utf8');
}

const CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #5a6270; --line: #d6dae0;
  --accent: #0b5cad; --danger: #b3261e; font-family: system-ui, sans-serif; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8eb; --bg: #14171a; --muted: #a0a8b4;
  --line: #323840; --accent: #7db4ff; --danger: #ff8a80; } }
body { margin: 0; color: var(--fg); background: var(--bg); line-height: 1.4; }
header { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; padding: .6rem 1rem;
  border-bottom: 1px solid var(--line); }
nav { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; }
main { padding: 1rem; max-width: 1400px; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible {
  outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: .5rem; background: var(--bg); }
.who { color: var(--muted); }
.inline { display: inline; }
.stack { display: flex; flex-direction: column; gap: .5rem; max-width: 28rem; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin-bottom: 1rem; }
.filters fieldset { border: 1px solid var(--line); display: flex; flex-wrap: wrap; gap: .25rem .75rem; }
input, select, button { font: inherit; padding: .3rem .5rem; }
button { cursor: pointer; }
button.danger { color: #fff; background: var(--danger); border: 0; border-radius: 4px; padding: .4rem .8rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.message { max-width: 24rem; overflow-wrap: anywhere; }
pre { background: color-mix(in srgb, var(--line) 35%, transparent); padding: .75rem; overflow-x: auto; }
.status, .event { font-size: .8rem; padding: .1rem .45rem; border-radius: 999px; border: 1px solid var(--line);
  white-space: nowrap; }
.status-working { background: #dbeafe; color: #1e3a8a; } .status-input_required { background: #fef3c7; color: #78350f; }
.status-completed { background: #dcfce7; color: #14532d; } .status-failed { background: #fee2e2; color: #7f1d1d; }
.status-cancelled { background: #e5e7eb; color: #374151; }
.event-lease_taken_over, .event-attempt_failed, .event-expired { background: #fee2e2; color: #7f1d1d; }
.event-console_cancel, .event-console_answer { background: #ede9fe; color: #4c1d95; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 420px), 1fr)); gap: 1rem; }
p code { overflow-wrap: anywhere; }
.hint { color: var(--muted); font-size: .85rem; margin: 0 0 .4rem; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.error { color: var(--danger); } .notice { border-left: 4px solid var(--accent); padding-left: .6rem; }
.live { font-size: .8rem; color: var(--muted); font-weight: normal; }
tr.flash { animation: flash 1.2s ease-out; }
@keyframes flash { from { background: color-mix(in srgb, var(--accent) 25%, transparent); } }
@media (max-width: 640px) { .wide { display: none; } main { padding: .6rem; } h1 { font-size: 1.3rem; }
  .facts { grid-template-columns: 1fr; } .facts dt { font-weight: 600; } }
`;

/**
 * The one client script: the live list (EventSource on /console/live), the live task page, the
 * history filter, and the health chart. Pages work without it; it only keeps them current.
 */
const SCRIPT = `(() => {
  const state = document.getElementById('live-state');
  const list = document.getElementById('task-list');
  const taskMain = document.getElementById('task-main');
  const say = (text) => { if (state) state.textContent = text; };
  if (list) {
    const source = new EventSource('/console/live' + location.search);
    source.onopen = () => say('● live');
    source.onerror = () => say('○ reconnecting');
    source.onmessage = (message) => {
      const data = JSON.parse(message.data);
      if (!data.rows) return;
      const body = list.tBodies[0];
      for (const row of data.rows) {
        const existing = body.querySelector('tr[data-id="' + CSS.escape(row.id) + '"]');
        const holder = document.createElement('tbody');
        holder.innerHTML = row.html;
        const fresh = holder.firstElementChild;
        if (!fresh) continue;
        fresh.classList.add('flash');
        if (existing) existing.replaceWith(fresh);
        else if (row.matches && list.dataset.live === 'prepend') {
          body.prepend(fresh);
          const empty = document.getElementById('empty');
          if (empty) empty.remove();
        }
      }
      list.dataset.updates = String(Number(list.dataset.updates || '0') + 1);
    };
  }
  if (taskMain) {
    const id = taskMain.dataset.taskId;
    const source = new EventSource('/console/live?task=' + encodeURIComponent(id));
    let pending = false;
    source.onmessage = async (message) => {
      const data = JSON.parse(message.data);
      if (!data.task || pending) return;
      // Never replace a form someone is filling in.
      if (document.activeElement && document.activeElement.closest('form')) return;
      pending = true;
      try {
        const page = await fetch(location.pathname, { credentials: 'same-origin' });
        const doc = new DOMParser().parseFromString(await page.text(), 'text/html');
        // Asked again: the form may have taken the focus while the page was fetched.
        if (document.activeElement && document.activeElement.closest('form')) return;
        const next = doc.getElementById('task-main');
        const current = document.getElementById('task-main');
        if (next && current) { current.replaceWith(next); bindHistoryFilter(); }
      } finally { pending = false; }
    };
  }
  function bindHistoryFilter() {
    const input = document.getElementById('history-filter');
    const table = document.getElementById('history');
    if (!input || !table) return;
    const apply = () => {
      const text = input.value.trim().toLowerCase();
      for (const row of table.tBodies[0].rows)
        row.hidden = text !== '' && !row.textContent.toLowerCase().includes(text);
    };
    input.addEventListener('input', apply);
    apply();
  }
  bindHistoryFilter();
  const charts = [document.getElementById('throughput-chart'), document.getElementById('latency-chart')]
    .filter((element) => element !== null);
  if (charts.length > 0 && window.uPlot === undefined) {
    const css = document.createElement('link');
    css.rel = 'stylesheet'; css.href = '/console/assets/uPlot.min.css';
    document.head.append(css);
    const script = document.createElement('script');
    script.src = '/console/assets/uPlot.iife.min.js';
    script.onload = () => charts.forEach(drawChart);
    document.head.append(script);
  }
  function drawChart(element) {
    const s = JSON.parse(element.dataset.series);
    const width = Math.max(280, Math.min(element.clientWidth || 800, 1100));
    const latency = element.id === 'latency-chart';
    const series = latency
      ? [{}, { label: 'p50 s', stroke: '#0b5cad', points: { show: true, size: 6 } },
          { label: 'p95 s', stroke: '#b45309', points: { show: true, size: 6 } }]
      : [{}, { label: 'created', stroke: '#0b5cad' }, { label: 'completed', stroke: '#15803d' },
          { label: 'failed', stroke: '#b3261e' }];
    const data = latency ? [s.minutes, s.p50, s.p95] : [s.minutes, s.created, s.completed, s.failed];
    new window.uPlot({ width, height: 220, series,
      axes: [{}, { label: latency ? 'create to settle, s' : 'per minute' }] }, data, element);
  }
})();
`;

export function consoleAssets(): Hono {
  const files: Record<string, { body: string; type: string }> = {
    'console.css': { body: CSS, type: 'text/css; charset=utf-8' },
    'console.js': { body: SCRIPT, type: 'text/javascript; charset=utf-8' },
    'uPlot.iife.min.js': {
      body: uplotFile('uPlot.iife.min.js'),
      type: 'text/javascript; charset=utf-8',
    },
    'uPlot.min.css': { body: uplotFile('uPlot.min.css'), type: 'text/css; charset=utf-8' },
  };
  const assets = new Hono();
  assets.get('/:name', (c) => {
    const file = files[c.req.param('name')];
    if (file === undefined) return c.text('not found', 404);
    return c.body(file.body, 200, {
      'Content-Type': file.type,
      'Cache-Control': 'public, max-age=3600',
    });
  });
  return assets;
}
