import type { InputResponses, Task } from '@mcp-tasks/tasks';
import type { Db } from '../db/database.js';
import {
  answerInputForOperator,
  cancelTasksForOperator,
  cancellableFilter,
  type CancelTarget,
} from './console-actions.js';
import {
  readReplicaLagSeconds,
  readStoreHealth,
  readLatency,
  readThroughput,
  type Latency,
  type StoreHealth,
  type Throughput,
} from './console-health.js';
import {
  countTasksForOperator,
  getTaskForOperator,
  getTaskRowsForOperator,
  listTasksForOperator,
  type OperatorScope,
  type PageCursor,
  type TaskFilter,
  type TaskListPage,
  type TaskListRow,
} from './console-queries.js';
import {
  lastEventId,
  listTaskEvents,
  readEventsAfter,
  type EventMark,
  type TaskEvent,
} from './task-events.js';

/**
 * The operator console's door into the store: reads and actions across owners, always within an
 * OperatorScope (one tenant or all). Actions audit themselves in their own transaction.
 */
export interface ConsoleService {
  listTasks(
    scope: OperatorScope,
    filter: TaskFilter,
    page: { cursor?: PageCursor; limit: number },
  ): Promise<TaskListPage>;
  /** Rows by id within the scope, each with whether it matches `filter` (the live list). */
  getTaskRows(
    scope: OperatorScope,
    taskIds: readonly string[],
    filter: TaskFilter,
  ): Promise<(TaskListRow & { matches: boolean })[]>;
  getTask(scope: OperatorScope, taskId: string): Promise<Task | undefined>;
  /** The task's events, oldest first; undefined when the task is outside the scope or gone. */
  getHistory(scope: OperatorScope, taskId: string): Promise<TaskEvent[] | undefined>;
  /** How many tasks a bulk cancel by this filter would touch now. */
  countCancellable(scope: OperatorScope, filter: TaskFilter): Promise<number>;
  cancel(scope: OperatorScope, target: CancelTarget, actor: string): Promise<string[]>;
  answer(
    scope: OperatorScope,
    taskId: string,
    responses: InputResponses,
    actor: string,
  ): Promise<{ found: boolean; answered: string[] }>;
  health(scope: OperatorScope): Promise<StoreHealth>;
  throughput(scope: OperatorScope): Promise<Throughput>;
  latency(scope: OperatorScope): Promise<Latency>;
  lastEventId(): Promise<bigint>;
  readEventsAfter(afterId: bigint, limit: number): Promise<EventMark[]>;
}

export function createConsoleService(options: {
  db: Db;
  readDb?: Db | undefined;
  /** Sends the wake-up of a task an answer resumed (the task service's outbox). */
  wakeResumed: (taskId: string) => Promise<unknown>;
}): ConsoleService {
  const { db, readDb, wakeResumed } = options;
  return {
    listTasks: (scope, filter, page) => listTasksForOperator(db, scope, filter, page),
    getTaskRows: (scope, taskIds, filter) => getTaskRowsForOperator(db, scope, taskIds, filter),
    getTask: (scope, taskId) => getTaskForOperator(db, scope, taskId),
    async getHistory(scope, taskId) {
      const task = await getTaskForOperator(db, scope, taskId);
      return task === undefined ? undefined : await listTaskEvents(db, taskId);
    },
    countCancellable: (scope, filter) =>
      countTasksForOperator(db, scope, cancellableFilter(filter)),
    cancel: (scope, target, actor) => cancelTasksForOperator(db, scope, target, actor),
    async answer(scope, taskId, responses, actor) {
      const { found, answered, resumed } = await answerInputForOperator(
        db,
        scope,
        taskId,
        responses,
        actor,
      );
      if (resumed) await wakeResumed(taskId);
      return { found, answered };
    },
    async health(scope) {
      const health = await readStoreHealth(db, scope);
      if (readDb === undefined || scope.tenant !== null) return health;
      return { ...health, replicaLagSeconds: await readReplicaLagSeconds(readDb) };
    },
    throughput: (scope) => readThroughput(db, scope),
    latency: (scope) => readLatency(db, scope),
    lastEventId: () => lastEventId(db),
    readEventsAfter: (afterId, limit) => readEventsAfter(db, afterId, limit),
  };
}
