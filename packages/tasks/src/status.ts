export const TASK_STATUSES = [
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TERMINAL_STATUSES = ['completed', 'failed', 'cancelled'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export type ActiveStatus = Exclude<TaskStatus, TerminalStatus>;

export function isTerminalStatus(status: TaskStatus): status is TerminalStatus {
  return (TERMINAL_STATUSES as readonly TaskStatus[]).includes(status);
}

/**
 * The legal edges of the task state machine (EXT state diagram):
 * working <-> input_required, any active status -> any terminal status, terminal -> nothing.
 * `working -> working` is a progress update (new statusMessage or checkpoint). A task waiting in
 * `input_required` is held by nobody, so nothing can move it to `input_required` again: only an
 * answer (-> working) or an end (cancel, expiry) can.
 */
export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  if (isTerminalStatus(from)) return false;
  return !(from === 'input_required' && to === 'input_required');
}

export class IllegalTransitionError extends Error {
  constructor(
    readonly from: TaskStatus,
    readonly to: TaskStatus,
  ) {
    super(`illegal task transition ${from} -> ${to}`);
    this.name = 'IllegalTransitionError';
  }
}

export function assertTransition(from: TaskStatus, to: TaskStatus): void {
  if (!canTransition(from, to)) throw new IllegalTransitionError(from, to);
}
