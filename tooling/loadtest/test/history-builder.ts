import type { TaskStatus } from '@mcp-tasks/tasks';
import type { HistoryRecord } from '../src/history/records.js';
import { UNKNOWN_TASK_ERROR } from '../src/check/unknown-task-error.js';

export const FAILING_JOB_RESULT = {
  content: [{ type: 'text', text: 'Tool execution failed: failing_job always fails' }],
  isError: true,
};

/**
 * Writes hand-made histories for the checker's tests: each call appends the records a real run
 * would write, at the time given (ms).
 */
export function historyBuilder(taskBoundMs = 10_000, startT = 0) {
  const records: HistoryRecord[] = [{ kind: 'run', t: startT, taskBoundMs, seed: 1 }];
  let op = 0;
  const exchange = (
    t: number,
    request: { replica?: string; tenant?: string; method: string; taskId?: string } & Record<
      string,
      unknown
    >,
    reply: Record<string, unknown>,
    latency = 5,
  ) => {
    const id = op++;
    const common = {
      replica: request.replica ?? 'gw-1',
      tenant: request.tenant ?? 'acme',
      method: request.method,
    };
    records.push({ kind: 'request', t, op: id, ...common, ...request });
    records.push({
      kind: 'reply',
      t: t + latency,
      op: id,
      ...common,
      taskId: request.taskId,
      ...reply,
    });
  };
  const builder = {
    records,
    create(
      t: number,
      taskId: string,
      tenant = 'acme',
      tool = 'failing_job',
      args: Record<string, unknown> = {},
    ) {
      exchange(
        t,
        { method: 'tools/call', tenant, tool, arguments: args },
        { taskId, status: 'working', httpStatus: 200 },
      );
      return builder;
    },
    get(
      t: number,
      taskId: string,
      status: TaskStatus,
      extra: Record<string, unknown> = {},
      replica = 'gw-1',
    ) {
      exchange(t, { method: 'tasks/get', taskId, replica }, { status, httpStatus: 200, ...extra });
      return builder;
    },
    /** A subscriptions/listen stream opened at `t` and the snapshots it pushed, each at its time. */
    stream(
      t: number,
      taskId: string,
      pushed: readonly [number, TaskStatus, Record<string, unknown>?][],
      replica = 'gw-2',
    ) {
      const id = op++;
      records.push({
        kind: 'request',
        t,
        op: id,
        replica,
        tenant: 'acme',
        method: 'subscriptions/listen',
        taskId,
      });
      for (const [at, status, extra = {}] of pushed)
        records.push({
          kind: 'notification',
          t: at,
          op: id,
          replica,
          tenant: 'acme',
          taskId,
          status,
          ...extra,
        });
      return builder;
    },
    answer(t: number, taskId: string, inputKeys: string[]) {
      exchange(t, { method: 'tasks/update', taskId, inputKeys }, { httpStatus: 200 });
      return builder;
    },
    probe(t: number, taskId: string, tenant: string, reply: Record<string, unknown>) {
      exchange(
        t,
        { method: 'tasks/get', taskId, tenant, probe: true },
        { httpStatus: 200, ...reply },
      );
      return builder;
    },
    /** Any request and the reply it got (an error, typically: a refusal, a 500, a 502). */
    call(t: number, method: string, reply: Record<string, unknown>, taskId?: string) {
      exchange(t, { method, ...(taskId === undefined ? {} : { taskId }) }, reply);
      return builder;
    },
    probeAnsweredCorrectly(t: number, taskId: string, tenant: string) {
      return builder.probe(t, taskId, tenant, {
        errorCode: UNKNOWN_TASK_ERROR.code,
        errorMessage: UNKNOWN_TASK_ERROR.message,
      });
    },
    step(
      taskId: string,
      worker: string,
      epoch: number,
      startMs: number,
      endMs: number | undefined,
      step = 's0',
      /** The end line's outcome (default `complete`) and lease deadline (default none). */
      end: { outcome?: string; leaseDeadlineMs?: number } = {},
    ) {
      records.push({ kind: 'step', phase: 'start', taskId, step, epoch, worker, startMs });
      if (endMs !== undefined)
        records.push({
          kind: 'step',
          phase: 'end',
          taskId,
          step,
          epoch,
          worker,
          startMs,
          endMs,
          outcome: end.outcome ?? 'complete',
          ...(end.leaseDeadlineMs === undefined ? {} : { leaseDeadlineMs: end.leaseDeadlineMs }),
        });
      return builder;
    },
    chaos(t: number, id: string, action: string, target: string, plan = 'kill-worker') {
      records.push({ kind: 'chaos', t, id, plan, action, target });
      return builder;
    },
    /** The run was stopped early at t (Ctrl-C). */
    interrupted(t: number, inFlight = 1) {
      records.push({ kind: 'interrupted', t, inFlight });
      return builder;
    },
    final(
      t: number,
      taskId: string,
      status: TaskStatus | undefined,
      extra: Record<string, unknown> = {},
      replicas = ['gw-1', 'gw-2'],
    ) {
      for (const replica of replicas) {
        records.push(
          status === undefined
            ? {
                kind: 'final',
                t,
                replica,
                tenant: 'acme',
                taskId,
                errorCode: UNKNOWN_TASK_ERROR.code,
                errorMessage: UNKNOWN_TASK_ERROR.message,
                ...extra,
              }
            : {
                kind: 'final',
                t,
                replica,
                tenant: 'acme',
                taskId,
                status,
                ...extra,
              },
        );
      }
      return builder;
    },
    /** A task that is created, runs one step on one worker, completes, and reads back completed. */
    cleanTask(t: number, taskId: string, worker = 'w-1') {
      return builder
        .create(t, taskId)
        .step(taskId, worker, 1, t + 10, t + 12)
        .get(t + 50, taskId, 'completed', { result: FAILING_JOB_RESULT })
        .final(t + 5_000, taskId, 'completed', { result: FAILING_JOB_RESULT });
    },
  };
  return builder;
}
