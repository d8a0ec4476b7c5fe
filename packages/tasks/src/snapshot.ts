import type { JsonObject } from './json.js';
import type { InputRequests, Task, TaskError } from './task.js';
import type { TaskStatus } from './status.js';

/**
 * What a client may see of a task (R10, R14), before the wire adds `resultType` and `_meta`:
 * `inputRequests` only with input_required, `result` only with completed, `error` only with failed.
 */
export interface TaskSnapshot {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  inputRequests?: InputRequests;
  result?: JsonObject;
  error?: TaskError;
}

/** The part of a task its snapshot is made of (what `tasks/get` reads, and nothing else). */
export type TaskView = Pick<
  Task,
  | 'id'
  | 'status'
  | 'statusMessage'
  | 'createdAt'
  | 'lastUpdatedAt'
  | 'ttlMs'
  | 'pollIntervalMs'
  | 'inputRequests'
  | 'result'
  | 'error'
>;

export function buildTaskSnapshot(task: TaskView): TaskSnapshot {
  const snapshot: TaskSnapshot = {
    taskId: task.id,
    status: task.status,
    createdAt: task.createdAt.toISOString(),
    lastUpdatedAt: task.lastUpdatedAt.toISOString(),
    ttlMs: task.ttlMs,
  };
  if (task.statusMessage !== null) snapshot.statusMessage = task.statusMessage;
  if (task.pollIntervalMs !== null) snapshot.pollIntervalMs = task.pollIntervalMs;
  switch (task.status) {
    case 'input_required':
      snapshot.inputRequests = task.inputRequests;
      break;
    case 'completed':
      if (task.result === null) throw new Error(`completed task ${task.id} has no result`);
      snapshot.result = task.result;
      break;
    case 'failed':
      if (task.error === null) throw new Error(`failed task ${task.id} has no error`);
      snapshot.error = task.error;
      break;
    case 'working':
    case 'cancelled':
      break;
  }
  return snapshot;
}
