import { isTerminalStatus, type TaskStatus } from '@mcp-tasks/tasks';
import type { CheckResult } from '../check/checker.js';
import type { ViolationKind } from '../check/rules.js';
import type { TaskFacts } from '../check/task-facts.js';
import type { ChaosRecord, HistoryRecord, ReplyRecord, RequestRecord } from '../history/records.js';
import { summarizeAnswers, type AnswerSummary } from './answers.js';
import { chaosCoverage, type ChaosCoverage } from './chaos-coverage.js';
import { createLatencyRecorder, type LatencySummary } from './latency.js';
import { slowestTasks, type SlowTask } from './slowest.js';

export interface Recovery {
  event: ChaosRecord;
  /** Tasks the event hit: those with a step running on the target, else all tasks in flight. */
  affected: number;
  /** Affected tasks that made progress (a step started, or a terminal status) after the event. */
  recovered: number;
  /** From the event to each affected task's first progress. */
  latency: LatencySummary;
}

export interface RunSummary {
  durationS: number;
  created: number;
  completed: number;
  cancelled: number;
  failed: number;
  /** Acknowledged tasks the final reads could not find (must be 0). */
  lost: number;
  /** Acknowledged tasks never seen terminal. */
  unfinished: number;
  violations: number;
  violationsByKind: Partial<Record<ViolationKind, number>>;
  reExecutions: number;
  /** Steps that ran past their lease deadline (a stalled or cut-off worker), their writes fenced. */
  staleTails: number;
  createLatency: LatencySummary;
  endToEndLatency: LatencySummary;
  /** From a task's create to its first step starting, by owning tenant: the wait in the queue. */
  startLatencyByTenant: Record<string, LatencySummary>;
  tasksPerSecond: number;
  /** JSON-RPC errors by code; transport failures as `transport: <first word>`. */
  errorsByCode: Record<string, number>;
  /** Every answer by class, by chaos plan, and in each store outage (report/answers.ts). */
  answers: AnswerSummary;
  recoveries: Recovery[];
  /** The rounds each chaos plan began, and the plans that never ran; undefined without chaos. */
  chaos?: ChaosCoverage;
  /** The slowest tasks, create → terminal, each with its trace id when the run exported traces. */
  slowest: SlowTask[];
}

export const firstTerminal = (task: TaskFacts) =>
  task.observations.find((o) => isTerminalStatus(o.status));

export function errorKey(reply: ReplyRecord): string | undefined {
  if (reply.errorCode !== undefined) return String(reply.errorCode);
  if (reply.errorMessage !== undefined) {
    const word = reply.errorMessage.split(/[\s:]/)[0] ?? '';
    return `transport: ${word}`;
  }
  return undefined;
}

/** The create round trips that returned a task: request → reply time, ms. */
export function createLatencies(records: readonly HistoryRecord[]): { at: number; ms: number }[] {
  const sent = new Map<number, RequestRecord>();
  const found: { at: number; ms: number }[] = [];
  for (const record of records) {
    if (record.kind === 'request' && record.method === 'tools/call') sent.set(record.op, record);
    if (record.kind !== 'reply' || record.method !== 'tools/call') continue;
    const request = sent.get(record.op);
    if (request === undefined || record.taskId === undefined || errorKey(record) !== undefined)
      continue;
    found.push({ at: record.t, ms: record.t - request.t });
  }
  return found;
}

function firstProgressAfter(task: TaskFacts, t: number): number | undefined {
  const step = task.steps
    .filter((s) => s.startMs > t)
    .reduce<number | undefined>(
      (min, s) => (min === undefined || s.startMs < min ? s.startMs : min),
      undefined,
    );
  const terminal = firstTerminal(task);
  const terminalAt = terminal !== undefined && terminal.replyT > t ? terminal.replyT : undefined;
  if (step === undefined) return terminalAt;
  return terminalAt === undefined ? step : Math.min(step, terminalAt);
}

function lastStatusBefore(task: TaskFacts, t: number): TaskStatus | undefined {
  return task.observations.filter((o) => o.replyT <= t).at(-1)?.status;
}

function recoveryAfter(event: ChaosRecord, tasks: readonly TaskFacts[]): Recovery {
  const onTarget = tasks.filter((task) =>
    task.steps.some(
      (s) => s.worker === event.target && s.startMs <= event.t && (s.endMs ?? Infinity) > event.t,
    ),
  );
  const affected =
    onTarget.length > 0
      ? onTarget
      : tasks.filter((task) => {
          if (task.createReplyT > event.t) return false;
          const terminal = firstTerminal(task);
          if (terminal !== undefined && terminal.replyT <= event.t) return false;
          // A task waiting for its client's answer is not held up by the service.
          return lastStatusBefore(task, event.t) !== 'input_required';
        });
  const latency = createLatencyRecorder();
  let recovered = 0;
  for (const task of affected) {
    const progress = firstProgressAfter(task, event.t);
    if (progress === undefined) continue;
    recovered += 1;
    latency.record(progress - event.t);
  }
  return { event, affected: affected.length, recovered, latency: latency.summary() };
}

/** The numbers of a run, from its history and the checker's verdict. */
export function summarizeRun(records: readonly HistoryRecord[], check: CheckResult): RunSummary {
  const tasks = [...check.history.tasks.values()];
  const counts = { completed: 0, cancelled: 0, failed: 0, unfinished: 0 };
  const endToEnd = createLatencyRecorder();
  const startByTenant = new Map<string, ReturnType<typeof createLatencyRecorder>>();
  let firstCreate = Infinity;
  let lastTerminal = 0;
  for (const task of tasks) {
    firstCreate = Math.min(firstCreate, task.createRequestT);
    const last = task.observations.at(-1)?.status;
    if (last === 'completed' || last === 'cancelled' || last === 'failed') counts[last] += 1;
    else counts.unfinished += 1;
    if (task.steps.length > 0) {
      const started = Math.min(...task.steps.map((step) => step.startMs));
      let recorder = startByTenant.get(task.ownerTenant);
      if (recorder === undefined)
        startByTenant.set(task.ownerTenant, (recorder = createLatencyRecorder()));
      recorder.record(started - task.createRequestT);
    }
    const terminal = firstTerminal(task);
    if (terminal === undefined) continue;
    endToEnd.record(terminal.replyT - task.createRequestT);
    lastTerminal = Math.max(lastTerminal, terminal.replyT);
  }
  const createLatency = createLatencyRecorder();
  for (const { ms } of createLatencies(records)) createLatency.record(ms);

  const errorsByCode: Record<string, number> = {};
  for (const record of records) {
    if (record.kind !== 'reply') continue;
    const key = errorKey(record);
    if (key !== undefined) errorsByCode[key] = (errorsByCode[key] ?? 0) + 1;
  }
  const violationsByKind: Partial<Record<ViolationKind, number>> = {};
  for (const violation of check.violations)
    violationsByKind[violation.kind] = (violationsByKind[violation.kind] ?? 0) + 1;
  const lost = new Set(
    check.violations.filter((v) => v.kind === 'lost-task').flatMap((v) => v.taskIds),
  ).size;
  const terminalCount = counts.completed + counts.cancelled + counts.failed;
  const spanS = lastTerminal > firstCreate ? (lastTerminal - firstCreate) / 1_000 : 0;
  return {
    durationS: (check.history.end - check.history.start) / 1_000,
    created: tasks.length,
    ...counts,
    lost,
    violations: check.violations.length,
    violationsByKind,
    reExecutions: check.reExecutions.length,
    staleTails: check.staleTails.length,
    createLatency: createLatency.summary(),
    endToEndLatency: endToEnd.summary(),
    startLatencyByTenant: Object.fromEntries(
      [...startByTenant]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([tenant, recorder]) => [tenant, recorder.summary()]),
    ),
    tasksPerSecond: spanS > 0 ? terminalCount / spanS : 0,
    errorsByCode,
    answers: summarizeAnswers(records),
    recoveries: check.history.chaos.map((event) => recoveryAfter(event, tasks)),
    chaos: chaosCoverage(records),
    slowest: slowestTasks(records, check),
  };
}
