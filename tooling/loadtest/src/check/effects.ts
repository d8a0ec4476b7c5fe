import type { EffectsRecord, HistoryRecord } from '../history/records.js';
import type { Finding } from './rules.js';

/**
 * Exactly-once step effects (issue 29, docs/adr/0004): for every `transfer_funds` task, the
 * ledger holds exactly the transfers of the steps that committed — step i once, with the move its
 * arguments asked for, for every i below the steps committed, and nothing for later steps — and
 * the balances add up to what was opened.
 */
export interface EffectsSummary {
  tasks: number;
  /** Steps with more than one transfer row (each extra row counts once). */
  duplicate: number;
  /** Committed steps with no transfer row. */
  missing: number;
  /** Rows for steps that did not commit, or with another move than the step's. */
  unexpected: number;
  conserved: boolean;
}

export function checkEffects(records: readonly HistoryRecord[]): {
  summary: EffectsSummary | undefined;
  findings: Finding[];
} {
  const record = records.find((r): r is EffectsRecord => r.kind === 'effects');
  if (record === undefined) return { summary: undefined, findings: [] };
  const findings: Finding[] = [];
  const summary: EffectsSummary = {
    tasks: record.tasks.length,
    duplicate: 0,
    missing: 0,
    unexpected: 0,
    conserved: record.openingTotal === record.closingTotal,
  };
  const finding = (taskIds: string[], message: string): Finding => ({
    kind: 'effect-not-exactly-once',
    taskIds,
    at: record.t,
    since: record.t,
    message,
  });
  for (const task of record.tasks) {
    const problems: string[] = [];
    for (let step = 0; step < task.expected.length; step += 1) {
      const rows = task.recorded.filter((r) => r.step === step);
      const committed = step < task.stepsCommitted;
      if (committed && rows.length === 0) {
        summary.missing += 1;
        problems.push(`step ${step} committed but its transfer is missing`);
      }
      if (rows.length > 1) {
        summary.duplicate += rows.length - 1;
        problems.push(`step ${step} applied ${rows.length} times`);
      }
      const wrong = rows.filter((r) => !committed || r.move !== task.expected[step]);
      if (wrong.length > 0) {
        summary.unexpected += wrong.length;
        problems.push(
          committed
            ? `step ${step} recorded ${wrong.map((r) => r.move).join(', ')} for ${task.expected[step]}`
            : `step ${step} did not commit (${task.stepsCommitted} did) but its transfer is there`,
        );
      }
    }
    const beyond = task.recorded.filter((r) => r.step >= task.expected.length);
    if (beyond.length > 0) {
      summary.unexpected += beyond.length;
      problems.push(`${beyond.length} transfers for steps the task does not have`);
    }
    if (problems.length > 0)
      findings.push(
        finding([task.taskId], `transfer_funds (${task.status}): ${problems.join('; ')}`),
      );
  }
  if (!summary.conserved) {
    findings.push(
      finding(
        [],
        `ledger balances not conserved: ${record.openingTotal} opened, ${record.closingTotal} at the end`,
      ),
    );
  }
  return { summary, findings };
}

/** The summary line: `effects: N tasks, duplicate D, missing M` (and what else was wrong). */
export function formatEffects(summary: EffectsSummary): string {
  const extra = summary.unexpected > 0 ? `, unexpected ${summary.unexpected}` : '';
  const balances = summary.conserved ? 'balances conserved' : 'balances NOT conserved';
  return `effects: ${summary.tasks} tasks, duplicate ${summary.duplicate}, missing ${summary.missing}${extra} (${balances})`;
}
