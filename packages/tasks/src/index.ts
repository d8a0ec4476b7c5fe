export type { JsonObject, JsonPrimitive, JsonValue } from './json.js';
export {
  TASK_STATUSES,
  TERMINAL_STATUSES,
  IllegalTransitionError,
  assertTransition,
  canTransition,
  isTerminalStatus,
  type ActiveStatus,
  type TaskStatus,
  type TerminalStatus,
} from './status.js';
export type {
  InputRequests,
  InputResponses,
  Lease,
  Task,
  TaskError,
  TaskOperation,
  TaskOwner,
} from './task.js';
export { InputKeyReusedError, acceptInputResponses, issueInputKeys } from './input-keys.js';
export type { AcceptedResponses } from './input-keys.js';
export { isWellFormedTaskId, newTaskId } from './task-id.js';
export { buildTaskSnapshot, type TaskSnapshot, type TaskView } from './snapshot.js';
export {
  applyTaskEvent,
  initialLifecycleState,
  type LifecycleState,
  type TaskEvent,
} from './lifecycle.js';
