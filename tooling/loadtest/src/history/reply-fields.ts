import { TASK_STATUSES, type TaskStatus } from '@mcp-tasks/tasks';
import type { ReplyRecord } from './records.js';

export type ReplyFields = Pick<
  ReplyRecord,
  | 'taskId'
  | 'httpStatus'
  | 'status'
  | 'inputKeys'
  | 'result'
  | 'errorCode'
  | 'errorMessage'
  | 'retryAfter'
  | 'errorReason'
>;

const isStatus = (value: unknown): value is TaskStatus =>
  (TASK_STATUSES as readonly unknown[]).includes(value);

/**
 * What a history records of one JSON-RPC reply (a JSON body, or the last `data:` line of an SSE
 * stream): the task id and status of a task result, its outstanding input keys and completed
 * result, or the error code, message, `data.reason` and `Retry-After` header. A body that is no
 * JSON-RPC reply is a transport error (with its status and `Retry-After`, if any).
 */
export function replyFields(
  httpStatus: number,
  text: string,
  headers?: Pick<Headers, 'get'>,
): ReplyFields {
  const retryAfter = headers?.get('retry-after') ?? undefined;
  const sent = retryAfter === undefined ? {} : { retryAfter };
  const payload = text.startsWith('event:') || text.startsWith('data:') ? lastSseData(text) : text;
  let body: {
    result?: Record<string, unknown>;
    error?: { code?: unknown; message?: unknown; data?: { reason?: unknown } };
  };
  try {
    body = JSON.parse(payload) as typeof body;
  } catch {
    return { httpStatus, errorMessage: `HTTP ${httpStatus}: not a JSON-RPC reply`, ...sent };
  }
  if (body.error !== undefined) {
    const reason = body.error.data?.reason;
    return {
      httpStatus,
      errorCode: typeof body.error.code === 'number' ? body.error.code : undefined,
      errorMessage: String(body.error.message),
      ...sent,
      ...(typeof reason === 'string' ? { errorReason: reason } : {}),
    };
  }
  const result = body.result;
  if (result === undefined) return { httpStatus, errorMessage: `HTTP ${httpStatus}: no result` };
  const fields: ReplyFields = { httpStatus };
  if (typeof result.taskId === 'string') fields.taskId = result.taskId;
  if (isStatus(result.status)) fields.status = result.status;
  if (fields.status === 'input_required' && typeof result.inputRequests === 'object')
    fields.inputKeys = Object.keys(result.inputRequests ?? {});
  if (fields.status === 'completed' && result.result !== undefined)
    fields.result = result.result as ReplyFields['result'];
  return fields;
}

function lastSseData(text: string): string {
  const data = text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .at(-1);
  return data === undefined ? '' : data.slice('data:'.length).trim();
}
