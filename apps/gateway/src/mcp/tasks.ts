import {
  ErrorCode,
  ProtocolError,
  buildEmptyResult,
  buildGetTaskResult,
  checkInputResponses,
  inputResponsesError,
  parseParams,
  parseTaskIdParams,
} from '@mcp-tasks/protocol';
import { buildTaskSnapshot, isWellFormedTaskId } from '@mcp-tasks/tasks';
import { HttpProtocolError } from '../errors.js';
import { LenientUpdateTaskParamsSchema } from '../wire/lenient-params.js';
import { result, type MethodHandler } from './context.js';
import { PRINCIPAL_POLLS_PER_INTERVAL } from './poll-rate-limit.js';

/**
 * R15: one error for unknown, malformed, expired, deleted and foreign ids, so a probe cannot
 * tell "exists in another tenant" from "never existed".
 */
export function taskNotFound(): ProtocolError {
  return new ProtocolError(ErrorCode.InvalidParams, 'Task not found or expired');
}

function tooFast(intervalMs: number, waitMs: number): HttpProtocolError {
  return new HttpProtocolError(429, {
    code: ErrorCode.InvalidRequest,
    message: `Polling faster than pollIntervalMs (${intervalMs} ms); retry in ${waitMs} ms`,
    data: { retryAfterMs: waitMs },
    headers: { 'Retry-After': String(Math.ceil(waitMs / 1000)) },
  });
}

export const tasksGet: MethodHandler = async (ctx, services) => {
  const { taskId } = parseTaskIdParams(ctx.params);
  if (!isWellFormedTaskId(taskId)) throw taskNotFound();
  const { tenant, principal } = ctx.identity;
  const limits = services.pollLimits;
  const caller = `${tenant}\u0000${principal}`;
  if (limits !== undefined) {
    // Before the read: a throttled poll must not cost a database query.
    const interval = services.settings.taskPollIntervalMs / PRINCIPAL_POLLS_PER_INTERVAL;
    const waitMs = limits.principal.take(caller, interval);
    if (waitMs > 0) throw tooFast(services.settings.taskPollIntervalMs, waitMs);
  }
  // A poll still waiting for its read when its 504 went out (or its client left) is not sent.
  const task = await services.taskService.getTaskView(ctx.identity, taskId, {
    onTaken: () => ctx.checkDeadline(),
  });
  if (task === undefined) throw taskNotFound();
  if (limits !== undefined) {
    const interval = task.pollIntervalMs ?? services.settings.taskPollIntervalMs;
    const waitMs = limits.task.take(`${caller}\u0000${taskId}`, interval);
    if (waitMs > 0) throw tooFast(interval, waitMs);
  }
  return result(buildGetTaskResult(buildTaskSnapshot(task), services.serverInfo));
};

/**
 * R17: acknowledged only after the write is committed on the primary (and, with synchronous
 * replication, on the standby: also an update that finds its keys already answered). A tasks/get
 * right after reads the replica when one is configured: an asynchronous one may briefly show the
 * task before the answers.
 */
export const tasksUpdate: MethodHandler = async (ctx, services) => {
  const { taskId, inputResponses } = parseParams(LenientUpdateTaskParamsSchema, ctx.params);
  if (!isWellFormedTaskId(taskId)) throw taskNotFound();
  // Checked against the primary's outstanding requests before anything is written: an answer
  // that consumed its key but could not be used would leave the task unrecoverable. Concurrent
  // updates share the read and the write (natural batching in the task service).
  const inputRequests = await services.taskService.getInputRequests(ctx.identity, taskId);
  if (inputRequests === undefined) throw taskNotFound();
  const problems = checkInputResponses(inputRequests, inputResponses);
  if (problems.length > 0) throw inputResponsesError(problems);
  // Only checked answers go on: a key issued after this read (keys are predictable names) must
  // not slip through unchecked; anything else is ignored anyway (R17).
  const checked = Object.fromEntries(
    Object.entries(inputResponses).filter(([key]) => Object.hasOwn(inputRequests, key)),
  );
  // Written even when nothing is left to answer (a retry, `twice`): the statement locks the row,
  // so its commit waits for a synchronous standby like any other write. The primary may show
  // answers the standby lacks (a commit crash recovery made visible after its client got an
  // error): acknowledged without that wait, a tasks/get on the standby right after would show the
  // keys pending again, and a failover would lose the answer the client was told is recorded.
  const { found } = await services.taskService.submitInputResponses(ctx.identity, taskId, checked);
  if (!found) throw taskNotFound();
  return result(buildEmptyResult(services.serverInfo));
};

/** R18: records the intent; the same ack for a task that already ended. */
export const tasksCancel: MethodHandler = async (ctx, services) => {
  const { taskId } = parseTaskIdParams(ctx.params);
  if (!isWellFormedTaskId(taskId)) throw taskNotFound();
  const { found } = await services.taskService.cancel(ctx.identity, taskId);
  if (!found) throw taskNotFound();
  return result(buildEmptyResult(services.serverInfo));
};
