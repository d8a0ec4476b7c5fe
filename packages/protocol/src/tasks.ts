import { z } from 'zod';
import { ErrorV2Schema, TaskStatusV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import {
  META_RELATED_TASK,
  META_SERVER_INFO,
  META_SUBSCRIPTION_ID,
  Notification,
} from './constants.js';
import { jsonRpcNotification, type JsonRpcNotification, type RequestId } from './jsonrpc.js';
import { copyForExtension, isJsonRecord } from './json.js';
import type { Implementation } from './meta.js';
import { parseParams } from './params.js';
import { InputRequestsSchema, InputResponsesSchema } from './mrtr.js';
import { ResultMetaSchema, withServerInfo } from './results.js';
import { CallToolResultSchema } from './tools.js';

const MetaParam = z.record(z.string(), z.unknown()).optional();

/** Reused from ext-tasks. */
export const TaskStatusSchema = TaskStatusV2Schema;
/** The wire's statuses; `TaskStatus` is the domain's (@mcp-tasks/tasks, which this package may not import). */
type WireTaskStatus = z.infer<typeof TaskStatusSchema>;
/** Reused from ext-tasks: `{code: int, message, data?}` (R19). */
export const TaskErrorSchema = ErrorV2Schema;

/** CONF checks the `YYYY-MM-DDThh:mm:ss` prefix; a full ISO 8601 string passes. */
const Timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/, 'expected an ISO 8601 timestamp');
const absent = (why: string) => z.undefined({ error: why }).optional();

/**
 * Written here rather than reusing TaskV2Schema: that one strips unknown keys and accepts any
 * string timestamp and a zero or negative `pollIntervalMs`, which CONF rejects (R10).
 */
export const TaskShape = {
  taskId: z.string().min(1),
  status: TaskStatusSchema,
  statusMessage: z.string().optional(),
  createdAt: Timestamp,
  lastUpdatedAt: Timestamp,
  ttlMs: z.int().nonnegative().nullable(),
  pollIntervalMs: z.int().positive().optional(),
  /** Renamed in v2; the old keys must be absent (CONF tasks-wire-field-renames). */
  ttl: absent('ttl was renamed ttlMs'),
  pollInterval: absent('pollInterval was renamed pollIntervalMs'),
};
export const TaskSchema = z.looseObject(TaskShape);

/** A completed task inlines the full CallToolResult, with its own resultType (R14). */
export const InlinedCallToolResultSchema = CallToolResultSchema.refine(
  (r) => !(r._meta && META_RELATED_TASK in r._meta),
  { message: `the inlined result must not carry _meta["${META_RELATED_TASK}"]` },
);

const DetailedBase = { ...TaskShape };
export const WorkingTaskSchema = z.looseObject({
  ...DetailedBase,
  status: z.literal('working'),
  inputRequests: absent('inputRequests appears only with status input_required'),
  result: absent('result appears only with status completed'),
  error: absent('error appears only with status failed'),
});
export const InputRequiredTaskSchema = z.looseObject({
  ...DetailedBase,
  status: z.literal('input_required'),
  inputRequests: InputRequestsSchema,
  result: absent('result appears only with status completed'),
  error: absent('error appears only with status failed'),
});
export const CompletedTaskSchema = z.looseObject({
  ...DetailedBase,
  status: z.literal('completed'),
  result: InlinedCallToolResultSchema,
  inputRequests: absent('inputRequests appears only with status input_required'),
  error: absent('error appears only with status failed'),
});
export const FailedTaskSchema = z.looseObject({
  ...DetailedBase,
  status: z.literal('failed'),
  error: TaskErrorSchema,
  inputRequests: absent('inputRequests appears only with status input_required'),
  result: absent('result appears only with status completed'),
});
export const CancelledTaskSchema = z.looseObject({
  ...DetailedBase,
  status: z.literal('cancelled'),
  inputRequests: absent('inputRequests appears only with status input_required'),
  result: absent('result appears only with status completed'),
  error: absent('error appears only with status failed'),
});
export const DetailedTaskSchema = z.discriminatedUnion('status', [
  WorkingTaskSchema,
  InputRequiredTaskSchema,
  CompletedTaskSchema,
  FailedTaskSchema,
  CancelledTaskSchema,
]);
export type DetailedTask = z.infer<typeof DetailedTaskSchema>;

/** `tasks/get` answers the DetailedTask with `resultType: "complete"` (R14). */
export const GetTaskResultSchema = z.intersection(
  DetailedTaskSchema,
  z.looseObject({ resultType: z.literal('complete'), _meta: ResultMetaSchema.optional() }),
);

/** Flat `Result & Task` (R10): no wrapper and none of the per-status or MRTR fields. */
export const CreateTaskResultSchema = z.looseObject({
  ...TaskShape,
  resultType: z.literal('task'),
  task: absent('CreateTaskResult is flat: no task wrapper'),
  requestState: absent('CreateTaskResult carries no requestState'),
  inputRequests: absent('CreateTaskResult carries no inputRequests'),
  result: absent('CreateTaskResult carries no result'),
  error: absent('CreateTaskResult carries no error'),
  _meta: ResultMetaSchema.optional(),
});
export type CreateTaskResult = z.infer<typeof CreateTaskResultSchema>;

export const TaskIdParamsSchema = z.looseObject({
  taskId: z.string({ error: 'taskId must be a string' }),
  _meta: MetaParam,
});
export const GetTaskParamsSchema = TaskIdParamsSchema;
export const CancelTaskParamsSchema = TaskIdParamsSchema;

/**
 * The params of tasks/get and tasks/cancel. Params that plainly pass TaskIdParamsSchema (a
 * string taskId, `_meta` absent or an object) are taken as they are: the schema's parse was a
 * large share of a poll's CPU. Anything else goes through the schema, which words the -32602.
 */
export function parseTaskIdParams(params: unknown): { taskId: string } {
  if (
    isJsonRecord(params) &&
    typeof params.taskId === 'string' &&
    (params._meta === undefined || isJsonRecord(params._meta))
  ) {
    return { taskId: params.taskId };
  }
  return parseParams(TaskIdParamsSchema, params);
}
export const UpdateTaskParamsSchema = z.looseObject({
  taskId: z.string({ error: 'taskId must be a string' }),
  inputResponses: InputResponsesSchema,
  _meta: MetaParam,
});

export const TaskStatusNotificationSchema = z.looseObject({
  jsonrpc: z.literal('2.0'),
  method: z.literal(Notification.Tasks),
  params: DetailedTaskSchema,
});

/**
 * A task as the domain snapshots it (structurally `TaskSnapshot` of `@mcp-tasks/tasks`, which
 * this package may not import). `result` is the CallToolResult body without resultType/_meta.
 */
export interface TaskSnapshotInput {
  taskId: string;
  status: WireTaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  inputRequests?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

type WireTask = Record<string, unknown> & { taskId: string; status: WireTaskStatus };

function baseFields(s: TaskSnapshotInput): WireTask {
  const task: WireTask = {
    taskId: s.taskId,
    status: s.status,
    createdAt: s.createdAt,
    lastUpdatedAt: s.lastUpdatedAt,
    ttlMs: s.ttlMs,
  };
  if (s.statusMessage !== undefined) task.statusMessage = s.statusMessage;
  if (s.pollIntervalMs !== undefined) task.pollIntervalMs = s.pollIntervalMs;
  return task;
}

/** The inlined result: `resultType: "complete"` and serverInfo added, related-task removed. */
function inlineResult(
  result: Record<string, unknown>,
  serverInfo: Implementation,
): Record<string, unknown> {
  const raw = result._meta;
  // Copied key by key rather than spread-then-delete: `delete` turns the object into a slow
  // dictionary that every later read and JSON.stringify pays for (once per poll of a result).
  const meta: Record<string, unknown> = {};
  if (typeof raw === 'object' && raw !== null) {
    for (const key of Object.keys(raw)) {
      if (key !== META_RELATED_TASK) meta[key] = (raw as Record<string, unknown>)[key];
    }
  }
  meta[META_SERVER_INFO] = serverInfo;
  const inlined = copyForExtension(result);
  inlined.resultType = 'complete';
  inlined._meta = meta;
  return inlined;
}

/** The DetailedTask of a snapshot: only the field its status allows (R14). */
export function buildDetailedTask(s: TaskSnapshotInput, serverInfo: Implementation): WireTask {
  const task = baseFields(s);
  switch (s.status) {
    case 'input_required':
      task.inputRequests = s.inputRequests ?? {};
      break;
    case 'completed':
      if (s.result === undefined) throw new Error(`completed task ${s.taskId} has no result`);
      task.result = inlineResult(s.result, serverInfo);
      break;
    case 'failed':
      if (s.error === undefined) throw new Error(`failed task ${s.taskId} has no error`);
      task.error =
        s.error.data === undefined
          ? { code: s.error.code, message: s.error.message }
          : { ...s.error };
      break;
    case 'working':
    case 'cancelled':
      break;
  }
  return task;
}

export function buildGetTaskResult(
  s: TaskSnapshotInput,
  serverInfo: Implementation,
): WireTask & { resultType: 'complete'; _meta: Record<string, unknown> } {
  // The detailed task is a fresh object without `_meta`, so it is completed in place: the same
  // keys in the same order as spreading it twice through withServerInfo, without the copies.
  const task = buildDetailedTask(s, serverInfo) as WireTask & {
    resultType: 'complete';
    _meta: Record<string, unknown>;
  };
  task.resultType = 'complete';
  task._meta = { [META_SERVER_INFO]: serverInfo };
  return task;
}

/** The `tools/call` reply that hands out a task (R10): base fields only, whatever the status. */
export function buildCreateTaskResult(
  s: TaskSnapshotInput,
  serverInfo: Implementation,
): WireTask & { resultType: 'task'; _meta: Record<string, unknown> } {
  return withServerInfo({ resultType: 'task' as const, ...baseFields(s) }, serverInfo);
}

/** `notifications/tasks` on a listen stream: the full DetailedTask, no resultType (R21). */
export function buildTaskStatusNotification(
  subscriptionId: RequestId,
  s: TaskSnapshotInput,
  serverInfo: Implementation,
): JsonRpcNotification<WireTask & { _meta: Record<string, unknown> }> {
  return jsonRpcNotification(Notification.Tasks, {
    ...buildDetailedTask(s, serverInfo),
    _meta: { [META_SUBSCRIPTION_ID]: subscriptionId },
  });
}
