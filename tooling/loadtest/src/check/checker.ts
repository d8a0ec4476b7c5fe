import type { ChaosRecord, HistoryRecord } from '../history/records.js';
import {
  checkForeignRead,
  checkInputKeys,
  checkLostTasks,
  checkOverlappingSteps,
  checkResults,
  checkServerErrors,
  checkStaleTails,
  checkStatusSequence,
  checkTerminalInBound,
  cutByInterrupt,
  findReExecutions,
  findStaleTails,
  type Finding,
  type ReExecution,
  type StaleTail,
  type ViolationKind,
} from './rules.js';
import { checkEffects, type EffectsSummary } from './effects.js';
import { indexHistory, type IndexedHistory } from './task-facts.js';

export interface Violation {
  kind: ViolationKind;
  taskIds: string[];
  at: number;
  message: string;
  /** The chaos events from the task's creation to the violation, or the last one before. */
  chaos: ChaosRecord[];
}

export interface CheckResult {
  ok: boolean;
  violations: Violation[];
  reExecutions: ReExecution[];
  /** Steps that ran past their lease deadline, their writes fenced (checkStaleTails). */
  staleTails: StaleTail[];
  acknowledgedTasks: number;
  /** Tasks whose lifecycle the run's interrupt cut short (not seen to their end; not lost). */
  interruptedTasks: number;
  /** The ledger check of the transfer_funds tasks, when the run recorded one (checkEffects). */
  effects: EffectsSummary | undefined;
  history: IndexedHistory;
}

/** Slack after a violation within which a chaos event still counts as "around" it. */
const CHAOS_AFTER_MS = 1_000;

function chaosAround(finding: Finding, chaos: readonly ChaosRecord[]): ChaosRecord[] {
  const within = chaos.filter((e) => e.t >= finding.since && e.t <= finding.at + CHAOS_AFTER_MS);
  if (within.length > 0) return within;
  const before = chaos.filter((e) => e.t < finding.since).at(-1);
  return before === undefined ? [] : [before];
}

/** Checks a whole history (see the rules in rules.ts); `ok` when nothing was violated. */
export function checkHistory(records: readonly HistoryRecord[]): CheckResult {
  const history = indexHistory(records);
  const findings: Finding[] = [];
  // How stale a read may be (a run whose gateways read lagging replicas records its bound).
  const run = records.find((record) => record.kind === 'run');
  const staleReadMs = Number(run?.kind === 'run' ? (run.config?.staleReadMs ?? 0) : 0);
  // A run with retention (the soak) records the ttl and retention after which a task may be gone.
  const config = run?.kind === 'run' ? run.config : undefined;
  const deletableAfterMs =
    typeof config?.ttlMs === 'number' && typeof config.retentionMs === 'number'
      ? config.ttlMs + config.retentionMs
      : undefined;
  // A run stopped early (Ctrl-C) records when: lifecycles running then were cut short.
  const interruptedAt = records.find((record) => record.kind === 'interrupted')?.t;
  let interruptedTasks = 0;
  for (const task of history.tasks.values()) {
    if (cutByInterrupt(task, interruptedAt)) interruptedTasks += 1;
    findings.push(
      ...checkLostTasks(task, deletableAfterMs, interruptedAt),
      ...checkTerminalInBound(task, interruptedAt),
      ...checkStatusSequence(task),
      ...checkInputKeys(task, staleReadMs),
      ...checkResults(task),
    );
  }
  for (const read of history.foreignReads) findings.push(...checkForeignRead(read));
  for (const record of records)
    if (record.kind === 'reply' || record.kind === 'final')
      findings.push(...checkServerErrors(record));
  findings.push(...checkOverlappingSteps(history));
  const staleTails = findStaleTails(history);
  findings.push(...checkStaleTails(history, staleTails));
  const effects = checkEffects(records);
  findings.push(...effects.findings);
  findings.sort((a, b) => a.at - b.at);
  const violations = findings.map((finding) => ({
    kind: finding.kind,
    taskIds: finding.taskIds,
    at: finding.at,
    message: finding.message,
    chaos: chaosAround(finding, history.chaos),
  }));
  return {
    ok: violations.length === 0,
    violations,
    reExecutions: findReExecutions(history),
    staleTails,
    acknowledgedTasks: history.tasks.size,
    interruptedTasks,
    effects: effects.summary,
    history,
  };
}
