import Table from 'cli-table3';
import type { CheckResult } from '../check/checker.js';
import { renderChaosRounds, renderNeverRan } from './chaos-coverage.js';
import type { LatencySummary } from './latency.js';
import type { RunSummary } from './summary.js';

const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
const percentiles = (l: LatencySummary) =>
  l.count === 0 ? '-' : `p50 ${ms(l.p50)}  p95 ${ms(l.p95)}  p99 ${ms(l.p99)}  (n=${l.count})`;

type TableStyle = { head?: string[]; border?: string[] };

/** The run's counts and latencies, one row each. */
function mainTable(summary: RunSummary, style: TableStyle): string {
  const main = new Table({ style });
  main.push(
    { 'tasks created': String(summary.created) },
    { completed: String(summary.completed) },
    { cancelled: String(summary.cancelled) },
    { failed: String(summary.failed) },
    { 'lost (must be 0)': String(summary.lost) },
    { 'never terminal': String(summary.unfinished) },
    { violations: String(summary.violations) },
    { 're-executed steps (after takeover)': String(summary.reExecutions) },
    { 'stale tails (past lease, writes fenced)': String(summary.staleTails) },
    { 'create latency': percentiles(summary.createLatency) },
    { 'end-to-end latency': percentiles(summary.endToEndLatency) },
    ...Object.entries(summary.startLatencyByTenant).map(([tenant, latency]) => ({
      [`create → first step, tenant ${tenant}`]: percentiles(latency),
    })),
    { 'tasks/s': summary.tasksPerSecond.toFixed(1) },
    { duration: `${summary.durationS.toFixed(1)} s` },
  );
  return main.toString();
}

/** The errors by code, most frequent first. */
function pushErrors(summary: RunSummary, style: TableStyle, parts: string[]): void {
  const errors = Object.entries(summary.errorsByCode).sort((a, b) => b[1] - a[1]);
  if (errors.length > 0) {
    const table = new Table({ head: ['error', 'count'], style });
    for (const [code, count] of errors) table.push([code, String(count)]);
    parts.push(table.toString());
  }
}

/** The answers by class, overall and per plan. */
function pushAnswers(summary: RunSummary, style: TableStyle, parts: string[]): void {
  const plans = Object.keys(summary.answers.byPlan);
  const classes = Object.entries(summary.answers.byClass).sort((a, b) => b[1] - a[1]);
  if (classes.length > 0) {
    const table = new Table({ head: ['answer', 'all', ...plans], style });
    for (const [kind, count] of classes)
      table.push([
        kind,
        String(count),
        ...plans.map((plan) => String(summary.answers.byPlan[plan]?.[kind] ?? 0)),
      ]);
    parts.push(table.toString());
  }
}

/** What the clients were answered during each store outage. */
function pushOutages(summary: RunSummary, style: TableStyle, parts: string[]): void {
  if (summary.answers.outages.length > 0) {
    const table = new Table({
      head: ['store outage', 'action', 'first create after', 'answers until then'],
      style,
    });
    for (const o of summary.answers.outages)
      table.push([
        o.event.id,
        o.event.action,
        o.firstCreateMs === null ? 'none' : ms(o.firstCreateMs),
        Object.entries(o.answers)
          .map(([kind, count]) => `${kind}: ${count}`)
          .join(', ') || '-',
      ]);
    parts.push(table.toString());
  }
}

/** How the tasks each chaos event touched recovered. */
function pushRecoveries(summary: RunSummary, style: TableStyle, parts: string[]): void {
  if (summary.recoveries.length > 0) {
    const table = new Table({
      head: ['chaos event', 'action', 'target', 'affected', 'recovered', 'recovery p50', 'max'],
      style,
    });
    for (const r of summary.recoveries) {
      const l = r.latency;
      table.push([
        r.event.id,
        r.event.action,
        r.event.target,
        String(r.affected),
        String(r.recovered),
        l.count === 0 ? '-' : ms(l.p50),
        l.count === 0 ? '-' : ms(l.max),
      ]);
    }
    parts.push(table.toString());
  }
}

/** The slowest tasks, with their trace ids. */
function pushSlowest(summary: RunSummary, style: TableStyle, parts: string[]): void {
  if (summary.slowest.length > 0) {
    const table = new Table({
      head: ['slowest task', 'tool', 'status', 'create → terminal', 'trace id'],
      style,
    });
    for (const t of summary.slowest)
      table.push([
        t.taskId,
        t.tool ?? '-',
        t.status ?? 'never terminal',
        ms(t.ms),
        t.traceId ?? '-',
      ]);
    parts.push(table.toString());
  }
}

/** The end-of-run summary as terminal tables (plain text when `style` is off, e.g. in CI logs). */
export function renderSummaryTable(summary: RunSummary, color = false): string {
  const style = color ? {} : { head: [], border: [] };
  const parts = [mainTable(summary, style)];
  pushErrors(summary, style, parts);
  pushAnswers(summary, style, parts);
  pushOutages(summary, style, parts);
  pushRecoveries(summary, style, parts);
  if (summary.chaos !== undefined) {
    parts.push(renderChaosRounds(summary.chaos));
    const warning = renderNeverRan(summary.chaos);
    if (warning !== undefined) parts.push(warning);
  }
  pushSlowest(summary, style, parts);
  return parts.join('\n');
}

/** One line per violation: kind, task ids, what happened, and the chaos events around it. */
export function renderViolations(check: CheckResult): string {
  return check.violations
    .map((v) => {
      const chaos =
        v.chaos.length === 0
          ? 'no chaos event around it'
          : `around: ${v.chaos.map((e) => `${e.id} (${e.action} ${e.target})`).join(', ')}`;
      return `VIOLATION ${v.kind} task ${v.taskIds.join(', ')}: ${v.message}; ${chaos}`;
    })
    .join('\n');
}
