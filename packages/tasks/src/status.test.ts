import { describe, expect, it } from 'vitest';
import { TASK_STATUSES, assertTransition, canTransition, isTerminalStatus } from './status.js';

describe('task status transitions', () => {
  const allowed: Array<[string, string]> = [
    ['working', 'working'],
    ['working', 'input_required'],
    ['working', 'completed'],
    ['working', 'failed'],
    ['working', 'cancelled'],
    ['input_required', 'working'],
    ['input_required', 'completed'],
    ['input_required', 'failed'],
    ['input_required', 'cancelled'],
  ];

  it('allows exactly the edges of the extension state diagram', () => {
    const actual = TASK_STATUSES.flatMap((from) =>
      TASK_STATUSES.filter((to) => canTransition(from, to)).map((to) => [from, to]),
    );
    expect(actual).toEqual(allowed);
  });

  it('never lets a terminal status change, not even to itself', () => {
    for (const from of ['completed', 'failed', 'cancelled'] as const) {
      for (const to of TASK_STATUSES) {
        expect(() => assertTransition(from, to)).toThrow(
          `illegal task transition ${from} -> ${to}`,
        );
      }
    }
  });

  it('names completed, failed and cancelled as the terminal statuses', () => {
    expect(TASK_STATUSES.filter(isTerminalStatus)).toEqual(['completed', 'failed', 'cancelled']);
  });
});
