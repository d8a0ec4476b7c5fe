import { canTransition, isTerminalStatus } from '@mcp-tasks/tasks';
import type { ChaosRecord, FinalReadRecord, ReplyRecord } from '../history/records.js';
import { RESULT_MATCHERS } from './result-matchers.js';
import type { ForeignRead, IndexedHistory, StepExecution, TaskFacts } from './task-facts.js';
import { UNKNOWN_TASK_ERROR } from './unknown-task-error.js';

export const VIOLATION_KINDS = [
  'lost-task',
  'not-terminal-in-bound',
  'terminal-state-left',
  'illegal-transition',
  'input-key-reused',
  'answer-not-applied',
  'cross-tenant-read',
  'result-mismatch',
  'overlapping-steps',
  'stale-step-continued',
  'http-500',
  'unavailable-without-retry-after',
  'effect-not-exactly-once',
] as const;
export type ViolationKind = (typeof VIOLATION_KINDS)[number];

/** A violation before the chaos events around it are attached. */
export interface Finding {
  kind: ViolationKind;
  taskIds: string[];
  /** When it showed (history time). */
  at: number;
  /** From when the chaos events count as "around" it (usually the task's create). */
  since: number;
  message: string;
}

const fmt = (ms: number) => `${Math.round(ms)} ms`;

/**
 * Every acknowledged create resolves afterwards: no request of its owner sent after the create's
 * reply is told the id is unknown, and each final read finds it.
 */
export function checkLostTasks(
  task: TaskFacts,
  deletableAfterMs?: number,
  interruptedAt?: number,
): Finding[] {
  const base = { taskIds: [task.taskId], since: task.createRequestT };
  // With retention running (a soak), the sweeper may delete a task once its ttl and retention
  // have passed: it was created after its create was sent, so no sooner than this.
  const deletableFrom =
    deletableAfterMs === undefined
      ? Number.POSITIVE_INFINITY
      : task.createRequestT + deletableAfterMs;
  const unresolved = task.notFound
    .filter((miss) => miss.requestT >= task.createReplyT && miss.replyT < deletableFrom)
    .map((miss) => ({
      ...base,
      kind: 'lost-task' as const,
      at: miss.replyT,
      message: `acknowledged, then ${miss.method} on ${miss.replica} answered ${UNKNOWN_TASK_ERROR.code} ${JSON.stringify(UNKNOWN_TASK_ERROR.message)}`,
    }));
  if (unresolved.length > 0) return unresolved;
  const cut = cutByInterrupt(task, interruptedAt);
  // A lifecycle cut short is not read back, or reads a stack the interrupt is stopping.
  if (task.finals.length === 0 && cut) return [];
  if (task.finals.length === 0) {
    return [
      {
        ...base,
        kind: 'lost-task',
        at: task.createReplyT,
        message: `acknowledged, but never read back at the end`,
      },
    ];
  }
  return task.finals
    .filter((read) => read.status === undefined && read.t < deletableFrom)
    .filter((read) => !(cut && read.t >= interruptedAt! && unanswered(read)))
    .map((read) => ({
      ...base,
      kind: 'lost-task' as const,
      at: read.t,
      message: `acknowledged at create, but the final read on ${read.replica} answered ${read.errorCode ?? 'no code'} ${JSON.stringify(read.errorMessage ?? '')}`,
    }));
}

/**
 * Whether the run's interrupt (if any) cut this task's lifecycle short: it had not been read back
 * by then. Its final reads and its end may then be missing without any fault of the service.
 */
export function cutByInterrupt(task: TaskFacts, interruptedAt: number | undefined): boolean {
  if (interruptedAt === undefined) return false;
  return task.finals.length === 0 || task.finals.some((read) => read.t >= interruptedAt);
}

/** A read that got no answer about the task: no reply at all, or "retry later". */
const unanswered = (read: FinalReadRecord) =>
  read.errorCode === undefined || read.retryAfter !== undefined;

/**
 * Every task is seen terminal within its bound of the create's acknowledgement; a task cut
 * short by the run's interrupt only if its bound had passed before the interrupt.
 */
export function checkTerminalInBound(task: TaskFacts, interruptedAt?: number): Finding[] {
  const terminal = task.observations.find((o) => isTerminalStatus(o.status));
  const deadline = task.createReplyT + task.boundMs;
  if (terminal !== undefined && terminal.replyT <= deadline) return [];
  if (cutByInterrupt(task, interruptedAt) && deadline >= interruptedAt!) return [];
  const last = task.observations.at(-1);
  return [
    {
      kind: 'not-terminal-in-bound',
      taskIds: [task.taskId],
      at: terminal?.replyT ?? deadline,
      since: task.createRequestT,
      message:
        terminal === undefined
          ? `never seen terminal (last seen ${last?.status ?? 'nothing'}); bound ${fmt(task.boundMs)}`
          : `first seen ${terminal.status} after ${fmt(terminal.replyT - task.createReplyT)}; bound ${fmt(task.boundMs)}`,
    },
  ];
}

/**
 * Statuses seen one after the other in real time (the first reply came before the second request
 * was sent) must be legal moves of the state machine (packages/tasks). Replies to overlapping
 * requests have no order, so they are not compared.
 */
export function checkStatusSequence(task: TaskFacts): Finding[] {
  const seen = task.observations;
  for (let later = 1; later < seen.length; later += 1) {
    const b = seen[later]!;
    for (let earlier = 0; earlier < later; earlier += 1) {
      const a = seen[earlier]!;
      if (a.replyT > b.requestT || a.status === b.status) continue;
      if (canTransition(a.status, b.status)) continue;
      const terminalLeft = isTerminalStatus(a.status);
      return [
        {
          kind: terminalLeft ? 'terminal-state-left' : 'illegal-transition',
          taskIds: [task.taskId],
          at: b.replyT,
          since: task.createRequestT,
          message: `seen ${a.status} on ${a.replica}, then ${b.status} on ${b.replica} ${fmt(b.replyT - a.replyT)} later`,
        },
      ];
    }
  }
  return [];
}

/**
 * Input keys are never reused: a key belongs to one input round (a run of input_required
 * observations); and a key answered successfully is never pending again afterwards. On
 * asynchronous replicas (`staleReadMs` > 0) a read may show the task as it was up to that long
 * ago, so a round may seem to end (a stale `working` from before the input request) or to come
 * back (a stale `input_required` after the answer): a key seen again within `staleReadMs` of the
 * observation that ended its round is such a read, not a second round.
 */
export function checkInputKeys(task: TaskFacts, staleReadMs = 0): Finding[] {
  const findings: Finding[] = [];
  const roundOfKey = new Map<string, number>();
  const roundEndedAt: number[] = [];
  let round = 0;
  let inRound = false;
  for (const seen of task.observations) {
    if (seen.status !== 'input_required') {
      if (inRound) roundEndedAt[round] = seen.replyT;
      inRound = false;
      continue;
    }
    if (!inRound) {
      round += 1;
      inRound = true;
    }
    for (const key of seen.inputKeys) {
      const first = roundOfKey.get(key);
      if (first === undefined) roundOfKey.set(key, round);
      else if (first !== round && seen.requestT > roundEndedAt[first]! + staleReadMs) {
        findings.push({
          kind: 'input-key-reused',
          taskIds: [task.taskId],
          at: seen.replyT,
          since: task.createRequestT,
          message: `input key ${JSON.stringify(key)} asked in round ${first} and again in round ${round}`,
        });
        roundOfKey.set(key, round);
      }
    }
  }
  for (const answer of task.answers) {
    for (const key of answer.keys) {
      // A read from an asynchronous replica may show the task as it was up to its lag ago.
      const again = task.observations.find(
        (o) => o.requestT > answer.replyT + staleReadMs && o.inputKeys.includes(key),
      );
      if (again === undefined) continue;
      findings.push({
        kind: 'answer-not-applied',
        taskIds: [task.taskId],
        at: again.replyT,
        since: task.createRequestT,
        message: `input key ${JSON.stringify(key)} was answered, then seen pending again on ${again.replica}`,
      });
    }
  }
  return findings;
}

/** Completed results match what the tool computes from the task's arguments. */
export function checkResults(task: TaskFacts): Finding[] {
  const matcher = task.tool === undefined ? undefined : RESULT_MATCHERS[task.tool];
  if (matcher === undefined) return [];
  for (const seen of task.observations) {
    if (seen.status !== 'completed' || seen.result === undefined) continue;
    const problem = matcher(task.arguments ?? {}, seen.result);
    if (problem === null) continue;
    return [
      {
        kind: 'result-mismatch',
        taskIds: [task.taskId],
        at: seen.replyT,
        since: task.createRequestT,
        message: `${task.tool} ${JSON.stringify(task.arguments ?? {})} on ${seen.replica}: ${problem}`,
      },
    ];
  }
  return [];
}

/**
 * A foreign tenant's read of a task gets exactly the unknown-id error. Transport errors, a
 * retry-later -32603 (with Retry-After: the server could not answer, e.g. its database
 * restarting) and -32603 "Internal error" (a 500, a violation of its own) disclose nothing and are
 * set aside.
 */
export function checkForeignRead({ request, reply, ownerTenant }: ForeignRead): Finding[] {
  const transportError = reply.errorCode === undefined && reply.errorMessage !== undefined;
  const unavailable =
    reply.errorCode === -32603 &&
    (reply.errorMessage === 'Internal error' || reply.retryAfter !== undefined);
  if (transportError || unavailable) return [];
  if (
    reply.errorCode === UNKNOWN_TASK_ERROR.code &&
    reply.errorMessage === UNKNOWN_TASK_ERROR.message &&
    reply.status === undefined
  )
    return [];
  const taskId = reply.taskId ?? request.taskId ?? '?';
  const answered =
    reply.status !== undefined
      ? `status ${reply.status}`
      : reply.errorCode !== undefined
        ? `error ${reply.errorCode} ${JSON.stringify(reply.errorMessage ?? '')}`
        : 'a success';
  return [
    {
      kind: 'cross-tenant-read',
      taskIds: [taskId],
      at: reply.t,
      since: request.t,
      message: `tenant ${reply.tenant} ${request.method} on ${reply.replica} for a task of ${ownerTenant} got ${answered}, not ${UNKNOWN_TASK_ERROR.code} ${JSON.stringify(UNKNOWN_TASK_ERROR.message)}`,
    },
  ];
}

/** The outcome a worker logs for a step that ended after its lease deadline (apps/worker/src/attempt/step-log.ts). */
export const LEASE_EXPIRED_OUTCOME = 'lease-expired';

/**
 * When an execution stopped counting as running under its lease: its end line, or, when it ended
 * after the lease deadline it held, that deadline (the rest is a stale tail, reported apart). A
 * step killed mid-way has no end line: it ends at the first chaos event aimed at its worker, else
 * it is taken as running to the end of the history.
 */
function endUnderLease(
  execution: StepExecution,
  chaos: readonly ChaosRecord[],
  end: number,
): number {
  if (execution.endMs !== undefined)
    return Math.min(execution.endMs, execution.leaseDeadlineMs ?? Number.POSITIVE_INFINITY);
  const hit = chaos.find((e) => e.target === execution.worker && e.t >= execution.startMs);
  return hit?.t ?? end;
}

function groupByTask(executions: readonly StepExecution[]): Map<string, StepExecution[]> {
  const byTask = new Map<string, StepExecution[]>();
  for (const execution of executions) {
    const list = byTask.get(execution.taskId) ?? [];
    list.push(execution);
    byTask.set(execution.taskId, list);
  }
  for (const list of byTask.values()) list.sort((a, b) => a.startMs - b.startMs);
  return byTask;
}

/**
 * No two executions of one task's steps ran at the same time within the leases they held,
 * whatever worker or epoch ran them. Each execution counts from its start to its end or to the
 * lease deadline it held, whichever came first: past the deadline the worker writes nothing of
 * the step (checkStaleTails), and no other worker can have claimed before it.
 */
export function checkOverlappingSteps(history: IndexedHistory): Finding[] {
  const findings: Finding[] = [];
  for (const [taskId, executions] of groupByTask(history.steps)) {
    for (let i = 0; i < executions.length; i += 1) {
      const a = executions[i]!;
      const aEnd = endUnderLease(a, history.chaos, history.end);
      for (let j = i + 1; j < executions.length; j += 1) {
        const b = executions[j]!;
        if (b.startMs >= aEnd) break;
        const together = Math.min(aEnd, endUnderLease(b, history.chaos, history.end)) - b.startMs;
        if (together <= 0) continue;
        findings.push({
          kind: 'overlapping-steps',
          taskIds: [taskId],
          at: b.startMs,
          since: a.startMs,
          message: `step ${a.step} on ${a.worker} (epoch ${a.epoch}) and step ${b.step} on ${b.worker} (epoch ${b.epoch}) ran at the same time for ${fmt(together)} within their leases`,
        });
      }
    }
  }
  return findings;
}

/** An execution that ran past the lease deadline it held (a stalled or cut-off worker). */
export interface StaleTail {
  taskId: string;
  step: string;
  epoch: number;
  worker: string;
  startMs: number;
  leaseDeadlineMs: number;
  endMs: number;
  outcome: string | undefined;
  /** Whether another worker started a step of this task after the deadline (a takeover). */
  takenOver: boolean;
}

/** Executions whose end line came after their lease deadline: counted and reported, not violations. */
export function findStaleTails(history: IndexedHistory): StaleTail[] {
  const tails: StaleTail[] = [];
  for (const executions of groupByTask(history.steps).values()) {
    for (const e of executions) {
      if (e.endMs === undefined || e.leaseDeadlineMs === undefined) continue;
      if (e.endMs <= e.leaseDeadlineMs) continue;
      const deadline = e.leaseDeadlineMs;
      tails.push({
        taskId: e.taskId,
        step: e.step,
        epoch: e.epoch,
        worker: e.worker,
        startMs: e.startMs,
        leaseDeadlineMs: deadline,
        endMs: e.endMs,
        outcome: e.outcome,
        takenOver: executions.some((o) => o.epoch > e.epoch && o.startMs >= deadline),
      });
    }
  }
  return tails;
}

/**
 * A stale tail is harmless only if its worker stopped at it: the step is logged `lease-expired`
 * (the runner logs that instead of the step's outcome and then writes nothing of it: no
 * checkpoint, input request or result), and that worker started no further step of that epoch
 * after the deadline. The history holds no store writes, so this is the evidence it can give;
 * the epoch fence in Postgres rejects any write of a superseded epoch in any case.
 */
export function checkStaleTails(history: IndexedHistory, tails: readonly StaleTail[]): Finding[] {
  const findings: Finding[] = [];
  for (const tail of tails) {
    // Another execution: a tail that itself began after the deadline (a worker so starved that
    // its claim's lease ran out before the step started) and stopped there is the tail, not more.
    const went = history.steps.find(
      (o) =>
        o.taskId === tail.taskId &&
        o.worker === tail.worker &&
        o.epoch === tail.epoch &&
        o.startMs > tail.leaseDeadlineMs &&
        !(o.step === tail.step && o.startMs === tail.startMs),
    );
    const reason =
      tail.outcome !== LEASE_EXPIRED_OUTCOME
        ? `logged its outcome as ${JSON.stringify(tail.outcome)}, not ${LEASE_EXPIRED_OUTCOME}`
        : went !== undefined
          ? `started step ${went.step} of that epoch ${fmt(went.startMs - tail.leaseDeadlineMs)} after it`
          : undefined;
    if (reason === undefined) continue;
    findings.push({
      kind: 'stale-step-continued',
      taskIds: [tail.taskId],
      at: tail.leaseDeadlineMs,
      since: tail.leaseDeadlineMs,
      message: `step ${tail.step} on ${tail.worker} (epoch ${tail.epoch}) ran ${fmt(tail.endMs - tail.leaseDeadlineMs)} past its lease deadline and ${reason}`,
    });
  }
  return findings;
}

export interface ReExecution {
  taskId: string;
  step: string;
  epochs: number[];
}

/** The same step run again in a later epoch: allowed after a takeover, counted and reported. */
export function findReExecutions(history: IndexedHistory): ReExecution[] {
  const epochsByStep = new Map<string, Set<number>>();
  for (const execution of history.steps) {
    const key = `${execution.taskId}\u0000${execution.step}`;
    const epochs = epochsByStep.get(key) ?? new Set<number>();
    epochs.add(execution.epoch);
    epochsByStep.set(key, epochs);
  }
  const found: ReExecution[] = [];
  for (const [key, epochs] of epochsByStep) {
    if (epochs.size < 2) continue;
    const [taskId = '', step = ''] = key.split('\u0000');
    found.push({ taskId, step, epochs: [...epochs].sort((a, b) => a - b) });
  }
  return found;
}

/** One answer a client got: a reply to a request of the load, or a final read. */
export type Answer = ReplyRecord | FinalReadRecord;

/**
 * A server never calls an infrastructure fault a bug, and every "not now" says when to come back:
 * no answer is HTTP 500, and every 5xx JSON-RPC answer carries `Retry-After`. A bare 5xx from the
 * load balancer (no JSON-RPC body: the gateway it forwarded to died mid-request) is the transport
 * failing, like a reset connection, and is counted apart, not held against the service.
 */
export function checkServerErrors(answer: Answer): Finding[] {
  const status = answer.httpStatus;
  if (status === undefined || status < 500) return [];
  const method = answer.kind === 'reply' ? answer.method : 'final tasks/get';
  const what = `${method} on ${answer.replica} answered HTTP ${status} ${answer.errorCode ?? ''} ${JSON.stringify(answer.errorMessage ?? '')}`;
  const base = { taskIds: answer.taskId === undefined ? [] : [answer.taskId], at: answer.t };
  if (status === 500)
    return [{ ...base, since: answer.t, kind: 'http-500', message: `${what} (500 is for bugs)` }];
  if (answer.errorCode !== undefined && answer.retryAfter === undefined)
    return [
      {
        ...base,
        since: answer.t,
        kind: 'unavailable-without-retry-after',
        message: `${what} without Retry-After`,
      },
    ];
  return [];
}
