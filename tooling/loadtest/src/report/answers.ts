import type { ChaosRecord, HistoryRecord, ReplyRecord } from '../history/records.js';
import type { Answer } from '../check/rules.js';

/**
 * What kind of answer a client got, in a few stable words:
 * - `ok`: a result;
 * - `retry later <status> <reason>`: a refusal with Retry-After (the server's "not now");
 * - `HTTP 500`, `<status> without Retry-After`: what the checker fails a run on;
 * - `error <code>`: any other JSON-RPC error (a bad request, an unknown task id);
 * - `load balancer <status>`: a bare 5xx/4xx with no JSON-RPC body (a gateway died mid-request);
 * - `transport`: no HTTP answer at all (refused, reset, timed out).
 */
export function answerClass(answer: Answer): string {
  const status = answer.httpStatus;
  if (answer.errorMessage === undefined) return 'ok';
  if (status === 500) return 'HTTP 500';
  if (answer.errorCode === undefined)
    return status === undefined ? 'transport' : `load balancer ${status}`;
  if (answer.retryAfter !== undefined && status !== undefined && status >= 429)
    return `retry later ${status} ${answer.errorReason ?? '(no reason)'}`;
  if (status !== undefined && status >= 500) return `${status} without Retry-After`;
  return `error ${answer.errorCode}`;
}

export type ClassCounts = Record<string, number>;

/** The time from a store outage's start to the first create that succeeded after it. */
export interface OutageWindow {
  event: ChaosRecord;
  /** null when no create succeeded after it. */
  firstCreateMs: number | null;
  /** The answers clients got from the event to that create (by class). */
  answers: ClassCounts;
}

export interface AnswerSummary {
  byClass: ClassCounts;
  /** By the chaos plan of the last chaos event before the answer (`before chaos` until the first). */
  byPlan: Record<string, ClassCounts>;
  outages: OutageWindow[];
}

/** Chaos actions that take the task store away (the server restart, the primary's kill). */
const STORE_OUTAGE_ACTIONS: ReadonlySet<string> = new Set(['restart', 'kill-primary']);

const add = (counts: ClassCounts, key: string) => (counts[key] = (counts[key] ?? 0) + 1);

/** Every answer of a history (replies and final reads) counted by class, by plan, and per outage. */
export function summarizeAnswers(records: readonly HistoryRecord[]): AnswerSummary {
  const chaos = records.filter((r): r is ChaosRecord => r.kind === 'chaos');
  const answers = records
    .filter((r): r is Answer => r.kind === 'reply' || r.kind === 'final')
    .sort((a, b) => a.t - b.t);
  const byClass: ClassCounts = {};
  const byPlan: Record<string, ClassCounts> = {};
  let next = 0;
  let plan = 'before chaos';
  for (const answer of answers) {
    while (next < chaos.length && chaos[next]!.t <= answer.t) plan = chaos[next++]!.plan;
    const kind = answerClass(answer);
    add(byClass, kind);
    add((byPlan[plan] ??= {}), kind);
  }
  const outages = chaos
    .filter((e) => e.target === 'postgres' && STORE_OUTAGE_ACTIONS.has(e.action))
    .map((event) => outageWindow(event, records, answers));
  return { byClass, byPlan, outages };
}

function outageWindow(
  event: ChaosRecord,
  records: readonly HistoryRecord[],
  answers: readonly Answer[],
): OutageWindow {
  const sentAt = new Map<number, number>();
  for (const r of records) if (r.kind === 'request') sentAt.set(r.op, r.t);
  const firstCreate = answers.find(
    (a): a is ReplyRecord =>
      a.kind === 'reply' &&
      a.method === 'tools/call' &&
      a.errorMessage === undefined &&
      (sentAt.get(a.op) ?? 0) >= event.t,
  );
  const end = firstCreate?.t ?? Number.POSITIVE_INFINITY;
  const counts: ClassCounts = {};
  for (const a of answers) if (a.t >= event.t && a.t < end) add(counts, answerClass(a));
  return {
    event,
    firstCreateMs: firstCreate === undefined ? null : firstCreate.t - event.t,
    answers: counts,
  };
}
