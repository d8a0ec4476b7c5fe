import type { LatencySummary } from '../report/latency.js';
import type { StorageSample } from './storage-sampler.js';

/** One sample window of a soak: the load in it, and storage as it stood at its end. */
export interface SoakWindow {
  index: number;
  /** Seconds since the load started, at the window's start and end. */
  startS: number;
  endS: number;
  /** Creates acknowledged and lifecycles ended (terminal seen), per second. */
  createdPerS: number;
  terminalPerS: number;
  create: LatencySummary;
  get: LatencySummary;
  /** Requests of the window that failed (transport or JSON-RPC error). */
  errors: number;
  /** Lifecycles running at the window's end. */
  inFlight: number;
  /** Arrivals the client could not start because `maxInFlight` lifecycles were running. */
  shed: number;
  storage: StorageSample;
  /** Rows the sweeper expired, deleted and re-dispatched within the window. */
  swept: StorageSample['swept'];
}

/** The figures the targets compare: first and last phase latencies, and what the checker said. */
export interface SoakOutcome {
  windows: SoakWindow[];
  askedRatePerS: number;
  /** Windows in the first and the last phase (the same count each). */
  phaseWindows: number;
  phases: {
    createFirst: LatencySummary;
    createLast: LatencySummary;
    getFirst: LatencySummary;
    getLast: LatencySummary;
  };
  /** The window whose storage is the reference the end is compared with (retention running). */
  referenceWindow: number;
  lost: number;
  violations: number;
}

export interface TargetResult {
  target: string;
  want: string;
  got: string;
  met: boolean;
}

const relationBytes = (w: SoakWindow, table: string) =>
  (w.storage.tables[table]?.tableBytes ?? 0) + (w.storage.tables[table]?.indexBytes ?? 0);

const ratio = (a: number, b: number) =>
  b === 0 ? (a === 0 ? 1 : Number.POSITIVE_INFINITY) : a / b;
const x = (n: number) => `${n.toFixed(2)}×`;

/** Issue 25's soak targets, each with the figure it was judged on. */
export function evaluateSoakTargets(outcome: SoakOutcome): TargetResult[] {
  const { windows, phases } = outcome;
  const last = windows.at(-1);
  const reference = windows[outcome.referenceWindow];
  if (last === undefined || reference === undefined)
    return [{ target: 'samples', want: 'at least one window', got: 'none', met: false }];
  const p99 = (first: LatencySummary, end: LatencySummary, what: string): TargetResult => {
    const r = ratio(end.p99, first.p99);
    return {
      target: `${what} p99, last ÷ first ${outcome.phaseWindows} window(s)`,
      want: '≤ 1.5×',
      got: `${end.p99.toFixed(2)} ÷ ${first.p99.toFixed(2)} ms = ${x(r)}`,
      met: r <= 1.5,
    };
  };
  const sizeRatio = ratio(relationBytes(last, 'tasks'), relationBytes(reference, 'tasks'));
  const afterReference = windows.slice(outcome.referenceWindow);
  const deadShare = Math.max(
    ...afterReference.map((w) => {
      const t = w.storage.tables.tasks;
      return t === undefined ? 0 : ratio(t.deadTuples, t.liveTuples);
    }),
  );
  const measured = windows.filter((w) => w.endS > w.startS);
  const heldRate =
    measured.reduce((n, w) => n + w.createdPerS * (w.endS - w.startS), 0) /
    Math.max(
      1e-9,
      measured.reduce((n, w) => n + (w.endS - w.startS), 0),
    );
  const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;
  return [
    {
      target: 'creates per second held',
      want: `≥ 0.95 × ${outcome.askedRatePerS.toFixed(1)}/s asked`,
      got: `${heldRate.toFixed(1)}/s (${x(ratio(heldRate, outcome.askedRatePerS))})`,
      met: heldRate >= 0.95 * outcome.askedRatePerS,
    },
    p99(phases.createFirst, phases.createLast, 'create'),
    p99(phases.getFirst, phases.getLast, 'tasks/get'),
    {
      target: `tasks table + indexes, end ÷ window ${outcome.referenceWindow + 1} (${Math.round(reference.endS)} s)`,
      want: '≤ 1.3×',
      got: `${mb(relationBytes(last, 'tasks'))} ÷ ${mb(relationBytes(reference, 'tasks'))} = ${x(sizeRatio)}`,
      met: sizeRatio <= 1.3,
    },
    {
      target: 'dead ÷ live tuples in tasks, worst window from the reference on',
      want: '< 20 %',
      got: `${(deadShare * 100).toFixed(1)} %`,
      met: deadShare < 0.2,
    },
    { target: 'lost tasks', want: '0', got: String(outcome.lost), met: outcome.lost === 0 },
    {
      target: 'checker violations',
      want: '0',
      got: String(outcome.violations),
      met: outcome.violations === 0,
    },
  ];
}
