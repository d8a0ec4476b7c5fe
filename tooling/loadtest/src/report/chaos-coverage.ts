import type { ChaosRoundsRecord, HistoryRecord } from '../history/records.js';

/** The rounds each chaos plan of a run began (its `chaos-rounds` record), and those that began none. */
export interface ChaosCoverage {
  rounds: ChaosRoundsRecord['plans'];
  neverRan: string[];
}

/** Undefined for a run without chaos, or a history from before the record existed. */
export function chaosCoverage(records: readonly HistoryRecord[]): ChaosCoverage | undefined {
  const last = records.findLast((r): r is ChaosRoundsRecord => r.kind === 'chaos-rounds');
  if (last === undefined) return undefined;
  return {
    rounds: last.plans,
    neverRan: last.plans.filter((p) => p.rounds === 0).map((p) => p.plan),
  };
}

/** "chaos rounds: kill-worker 3, failover 0" */
export const renderChaosRounds = (coverage: ChaosCoverage): string =>
  `chaos rounds: ${coverage.rounds.map((p) => `${p.plan} ${p.rounds}`).join(', ')}`;

/**
 * The warning for plans whose phase never came: `--chaos all` runs them in order, `--chaos-phase`
 * seconds each, only while the load lasts. Undefined when every plan ran.
 */
export function renderNeverRan(coverage: ChaosCoverage): string | undefined {
  if (coverage.neverRan.length === 0) return undefined;
  return `WARNING: chaos plans never ran (the load ended before their phase): ${coverage.neverRan.join(', ')}; raise --tasks (or --duration) or lower --chaos-phase`;
}
