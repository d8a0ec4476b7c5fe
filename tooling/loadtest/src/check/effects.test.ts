import { describe, expect, it } from 'vitest';
import type { EffectsRecord } from '../history/records.js';
import { checkEffects, formatEffects } from './effects.js';

const effects = (
  tasks: EffectsRecord['tasks'],
  totals: { openingTotal: number; closingTotal: number } = { openingTotal: 100, closingTotal: 100 },
): EffectsRecord => ({ kind: 'effects', t: 5, tasks, ...totals });

const task = (
  stepsCommitted: number,
  recorded: { step: number; move: string }[],
  status: EffectsRecord['tasks'][number]['status'] = 'completed',
) => ({ taskId: 't1', status, stepsCommitted, expected: ['a->b 1', 'b->c 2'], recorded });

describe('the effects check', () => {
  it('passes a ledger holding exactly the committed steps’ transfers', () => {
    const result = checkEffects([
      effects([
        task(2, [
          { step: 0, move: 'a->b 1' },
          { step: 1, move: 'b->c 2' },
        ]),
      ]),
    ]);
    expect(result.findings).toEqual([]);
    expect(formatEffects(result.summary!)).toBe(
      'effects: 1 tasks, duplicate 0, missing 0 (balances conserved)',
    );
  });

  it('counts a step applied twice, a committed step missing, and a step that did not commit', () => {
    const twice = checkEffects([
      effects([
        task(2, [
          { step: 0, move: 'a->b 1' },
          { step: 0, move: 'a->b 1' },
        ]),
      ]),
    ]);
    expect(twice.summary).toMatchObject({ duplicate: 1, missing: 1, unexpected: 0 });
    expect(twice.findings.map((f) => [f.kind, f.message])).toEqual([
      [
        'effect-not-exactly-once',
        'transfer_funds (completed): step 0 applied 2 times; step 1 committed but its transfer is missing',
      ],
    ]);
    const early = checkEffects([
      effects([
        task(
          1,
          [
            { step: 0, move: 'a->b 1' },
            { step: 1, move: 'b->c 2' },
          ],
          'cancelled',
        ),
      ]),
    ]);
    expect(early.summary).toMatchObject({ duplicate: 0, missing: 0, unexpected: 1 });
    expect(early.findings[0]?.message).toBe(
      'transfer_funds (cancelled): step 1 did not commit (1 did) but its transfer is there',
    );
  });

  it('reports balances that do not add up', () => {
    const result = checkEffects([effects([], { openingTotal: 100, closingTotal: 99 })]);
    expect(result.findings.map((f) => f.message)).toEqual([
      'ledger balances not conserved: 100 opened, 99 at the end',
    ]);
    expect(formatEffects(result.summary!)).toBe(
      'effects: 0 tasks, duplicate 0, missing 0 (balances NOT conserved)',
    );
  });

  it('has nothing to say about a run without a ledger', () => {
    expect(checkEffects([])).toEqual({ summary: undefined, findings: [] });
  });
});
