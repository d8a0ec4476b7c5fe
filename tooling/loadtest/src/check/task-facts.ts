import type { TaskStatus } from '@mcp-tasks/tasks';
import type {
  ChaosRecord,
  FinalReadRecord,
  HistoryRecord,
  NotificationRecord,
  ReplyRecord,
  RequestRecord,
  StepRecord,
} from '../history/records.js';
import { UNKNOWN_TASK_ERROR } from './unknown-task-error.js';

/** One status seen by the task's owner: a reply, or a final read (then requestT = replyT). */
export interface Observation {
  requestT: number;
  replyT: number;
  replica: string;
  status: TaskStatus;
  inputKeys: readonly string[];
  result: unknown;
  source: 'reply' | 'final' | 'stream';
}

/**
 * One step execution, its start and end lines joined; `endMs`, `outcome` and `leaseDeadlineMs`
 * (the worker's local lease deadline when the step ended) undefined when it never ended.
 */
export interface StepExecution {
  taskId: string;
  step: string;
  epoch: number;
  worker: string;
  startMs: number;
  endMs: number | undefined;
  outcome: string | undefined;
  leaseDeadlineMs: number | undefined;
}

export interface AnsweredInput {
  keys: readonly string[];
  replyT: number;
}

/** Everything the history says about one acknowledged task. */
export interface TaskFacts {
  taskId: string;
  ownerTenant: string;
  createRequestT: number;
  createReplyT: number;
  tool: string | undefined;
  arguments: Record<string, unknown> | undefined;
  boundMs: number;
  observations: Observation[];
  finals: FinalReadRecord[];
  answers: AnsweredInput[];
  /** The owner's requests about the task answered with the unknown-id error. */
  notFound: { replica: string; method: string; requestT: number; replyT: number }[];
  steps: StepExecution[];
}

/** A reply to a task id by someone other than its owner, with the request that asked. */
export interface ForeignRead {
  request: RequestRecord;
  reply: ReplyRecord;
  ownerTenant: string;
}

export interface IndexedHistory {
  tasks: Map<string, TaskFacts>;
  foreignReads: ForeignRead[];
  chaos: ChaosRecord[];
  /** Step executions of tasks no acknowledged create names (kept for the overlap check). */
  steps: StepExecution[];
  start: number;
  end: number;
}

const DEFAULT_TASK_BOUND_MS = 60_000;

function joinSteps(records: readonly StepRecord[]): StepExecution[] {
  const byKey = new Map<string, StepExecution>();
  for (const record of records) {
    const key = `${record.taskId}\u0000${record.worker}\u0000${record.epoch}\u0000${record.step}\u0000${record.startMs}`;
    const known = byKey.get(key);
    const ended =
      record.phase === 'end'
        ? {
            endMs: record.endMs ?? record.startMs,
            outcome: record.outcome,
            leaseDeadlineMs: record.leaseDeadlineMs,
          }
        : { endMs: undefined, outcome: undefined, leaseDeadlineMs: undefined };
    if (known === undefined) {
      byKey.set(key, { ...pick(record), ...ended });
    } else if (ended.endMs !== undefined) {
      Object.assign(known, ended);
    }
  }
  return [...byKey.values()];
}

const pick = (r: StepRecord) => ({
  taskId: r.taskId,
  step: r.step,
  epoch: r.epoch,
  worker: r.worker,
  startMs: r.startMs,
});

/** Groups a history by task: who owns it, what its owner saw, which steps ran. */
type Replies = { request: RequestRecord; reply: ReplyRecord }[];

/** The records by kind, each reply with its request, and the history's time span. */
function sortRecords(records: readonly HistoryRecord[]) {
  const requests = new Map<number, RequestRecord>();
  const chaos: ChaosRecord[] = [];
  const stepRecords: StepRecord[] = [];
  const replies: Replies = [];
  const finals: FinalReadRecord[] = [];
  const notifications: NotificationRecord[] = [];
  let boundMs = DEFAULT_TASK_BOUND_MS;
  let start = Number.POSITIVE_INFINITY;
  let end = 0;

  for (const record of records) {
    const t = record.kind === 'step' ? record.startMs : record.t;
    start = Math.min(start, t);
    end = Math.max(end, record.kind === 'step' ? (record.endMs ?? t) : t);
    switch (record.kind) {
      case 'run':
        boundMs = record.taskBoundMs;
        break;
      case 'request':
        requests.set(record.op, record);
        break;
      case 'reply': {
        const request = requests.get(record.op);
        if (request !== undefined) replies.push({ request, reply: record });
        break;
      }
      case 'notification':
        notifications.push(record);
        break;
      case 'chaos':
        chaos.push(record);
        break;
      case 'step':
        stepRecords.push(record);
        break;
      case 'final':
        finals.push(record);
        break;
    }
  }
  return { requests, chaos, stepRecords, replies, finals, notifications, boundMs, start, end };
}

/** Owners first: a task belongs to whoever got its CreateTaskResult. */
function tasksByOwner(replies: Replies, boundMs: number): Map<string, TaskFacts> {
  const tasks = new Map<string, TaskFacts>();
  for (const { request, reply } of replies) {
    if (reply.method !== 'tools/call' || reply.taskId === undefined) continue;
    if (reply.errorCode !== undefined || tasks.has(reply.taskId)) continue;
    tasks.set(reply.taskId, {
      taskId: reply.taskId,
      ownerTenant: reply.tenant,
      createRequestT: request.t,
      createReplyT: reply.t,
      tool: request.tool,
      arguments: request.arguments,
      boundMs: request.boundMs ?? boundMs,
      observations: [],
      finals: [],
      answers: [],
      notFound: [],
      steps: [],
    });
  }
  return tasks;
}

/** What each reply saw of its task: a status, an unknown task, an answer; or another tenant's read. */
function addReplies(
  replies: Replies,
  tasks: Map<string, TaskFacts>,
  foreignReads: ForeignRead[],
): void {
  for (const { request, reply } of replies) {
    const taskId = reply.taskId ?? request.taskId;
    const facts = taskId === undefined ? undefined : tasks.get(taskId);
    if (facts === undefined) continue;
    if (reply.tenant !== facts.ownerTenant) {
      foreignReads.push({ request, reply, ownerTenant: facts.ownerTenant });
      continue;
    }
    if (
      reply.errorCode === UNKNOWN_TASK_ERROR.code &&
      reply.errorMessage === UNKNOWN_TASK_ERROR.message
    ) {
      facts.notFound.push({
        replica: reply.replica,
        method: reply.method,
        requestT: request.t,
        replyT: reply.t,
      });
    }
    if (reply.status !== undefined) {
      facts.observations.push({
        requestT: request.t,
        replyT: reply.t,
        replica: reply.replica,
        status: reply.status,
        inputKeys: reply.inputKeys ?? [],
        result: reply.result,
        source: 'reply',
      });
    }
    if (
      reply.method === 'tasks/update' &&
      reply.errorCode === undefined &&
      reply.errorMessage === undefined
    ) {
      facts.answers.push({ keys: request.inputKeys ?? [], replyT: reply.t });
    }
  }
}

/**
 * A pushed snapshot was read by the server after the stream opened and, the stream being in
 * order, after the message before it was sent: that is its "request" time.
 */
function addNotifications(
  notifications: readonly NotificationRecord[],
  requests: Map<number, RequestRecord>,
  tasks: Map<string, TaskFacts>,
  foreignReads: ForeignRead[],
): void {
  const lastOnStream = new Map<number, number>();
  for (const pushed of notifications) {
    const facts = tasks.get(pushed.taskId);
    const opened = requests.get(pushed.op)?.t ?? pushed.t;
    const since = lastOnStream.get(pushed.op) ?? opened;
    lastOnStream.set(pushed.op, pushed.t);
    if (facts === undefined) continue;
    if (pushed.tenant !== facts.ownerTenant) {
      const request = requests.get(pushed.op);
      if (request !== undefined)
        foreignReads.push({
          request,
          reply: { ...pushed, kind: 'reply', method: 'subscriptions/listen' },
          ownerTenant: facts.ownerTenant,
        });
      continue;
    }
    facts.observations.push({
      requestT: since,
      replyT: pushed.t,
      replica: pushed.replica,
      status: pushed.status,
      inputKeys: pushed.inputKeys ?? [],
      result: pushed.result,
      source: 'stream',
    });
  }
}

/** The final reads of each task by its owner. */
function addFinals(finals: readonly FinalReadRecord[], tasks: Map<string, TaskFacts>): void {
  for (const final of finals) {
    const facts = tasks.get(final.taskId);
    if (facts === undefined || final.tenant !== facts.ownerTenant) continue;
    facts.finals.push(final);
    if (final.status !== undefined) {
      facts.observations.push({
        requestT: final.t,
        replyT: final.t,
        replica: final.replica,
        status: final.status,
        inputKeys: [],
        result: final.result,
        source: 'final',
      });
    }
  }
}

export function indexHistory(records: readonly HistoryRecord[]): IndexedHistory {
  const { requests, chaos, stepRecords, replies, finals, notifications, boundMs, start, end } =
    sortRecords(records);
  const tasks = tasksByOwner(replies, boundMs);
  const foreignReads: ForeignRead[] = [];
  addReplies(replies, tasks, foreignReads);
  addNotifications(notifications, requests, tasks, foreignReads);
  addFinals(finals, tasks);

  const steps = joinSteps(stepRecords);
  for (const execution of steps) tasks.get(execution.taskId)?.steps.push(execution);
  for (const facts of tasks.values()) facts.observations.sort((a, b) => a.replyT - b.replyT);
  chaos.sort((a, b) => a.t - b.t);
  return { tasks, foreignReads, chaos, steps, start: Number.isFinite(start) ? start : 0, end };
}
