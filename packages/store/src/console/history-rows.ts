import type { JsonObject } from '@mcp-tasks/tasks';

/** One entry of a task's history (migration 0017). */
export interface TaskEvent {
  /**
   * Increasing in insertion order; a page of history is ordered by it. A step's start shares the
   * id of the claim or checkpoint it was recorded with (migration 0021).
   */
  id: string;
  taskId: string;
  at: Date;
  kind: string;
  /** `console:<operator>` for a console action; null for what the triggers derived. */
  actor: string | null;
  data: JsonObject;
}

/**
 * A stored `task_events` row as the events it records. Since migration 0021 the start of the next
 * step is a field of the claim or checkpoint row it was recorded with (`stepStarted`, and for a
 * checkpoint the `worker`), not a row of its own: one row fewer per step on the hot paths. Such a
 * row is given back as two events, `claimed` or `checkpoint` then `step_started {step, worker}`,
 * both carrying the row's id (they were written by one change). Every other row is one event.
 */
export function eventsOfRow(row: TaskEvent): TaskEvent[] {
  if (row.actor !== null || (row.kind !== 'claimed' && row.kind !== 'checkpoint')) return [row];
  const { stepStarted, ...own } = row.data;
  if (typeof stepStarted !== 'number') return [row];
  const worker = own.worker ?? null;
  // The claim keeps its worker; on a checkpoint the worker is there only for the step it starts.
  if (row.kind === 'checkpoint') delete own.worker;
  const started: JsonObject = { step: stepStarted, worker };
  return [
    { ...row, data: own },
    { ...row, kind: 'step_started', data: started },
  ];
}
