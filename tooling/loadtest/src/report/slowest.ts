import { isTerminalStatus } from '@mcp-tasks/tasks';
import type { CheckResult } from '../check/checker.js';
import type { HistoryRecord } from '../history/records.js';

/** One of the run's slowest tasks, with the trace to open when the run exported traces. */
export interface SlowTask {
  taskId: string;
  tool: string | undefined;
  /** The first terminal status seen, or undefined when none was (then `ms` runs to the run's end). */
  status: string | undefined;
  /** From the create request to the first terminal status seen (or to the end of the run). */
  ms: number;
  traceId: string | undefined;
}

export const SLOWEST_TASKS = 5;

/** The create's trace id per task: the request names it, its reply names the task. */
function traceIdsByTask(records: readonly HistoryRecord[]): Map<string, string> {
  const byOp = new Map<number, string>();
  const byTask = new Map<string, string>();
  for (const record of records) {
    if (record.kind === 'request' && record.traceId !== undefined)
      byOp.set(record.op, record.traceId);
    if (record.kind !== 'reply' || record.taskId === undefined) continue;
    const traceId = byOp.get(record.op);
    if (traceId !== undefined && record.method === 'tools/call') byTask.set(record.taskId, traceId);
  }
  return byTask;
}

/** The `count` tasks that took longest from create to terminal, slowest first. */
export function slowestTasks(
  records: readonly HistoryRecord[],
  check: CheckResult,
  count = SLOWEST_TASKS,
): SlowTask[] {
  const traceIds = traceIdsByTask(records);
  const tasks: SlowTask[] = [...check.history.tasks.values()].map((task) => {
    const terminal = task.observations.find((o) => isTerminalStatus(o.status));
    return {
      taskId: task.taskId,
      tool: task.tool,
      status: terminal?.status,
      ms: (terminal?.replyT ?? check.history.end) - task.createRequestT,
      traceId: traceIds.get(task.taskId),
    };
  });
  return tasks.sort((a, b) => b.ms - a.ms || a.taskId.localeCompare(b.taskId)).slice(0, count);
}
