import { describe, expect, it } from 'vitest';
import { runInBatches } from './batch-loop.js';

/** A runBatch that hands back the given counts in turn, throwing where the list says so. */
function batches(...results: (number | Error)[]): (limit: number) => Promise<number> {
  let call = 0;
  return (limit) => {
    const result = results[call++];
    if (result instanceof Error) return Promise.reject(result);
    return Promise.resolve(Math.min(result ?? 0, limit));
  };
}

describe('runInBatches', () => {
  it('runs while batches come back full and stops at the first short one', async () => {
    expect(
      await runInBatches({ batchSize: 10, budgetMs: 60_000, runBatch: batches(10, 10, 3, 10) }),
    ).toEqual({ total: 23, batches: 3, outOfTime: false });
  });

  it('reports the rows of the batches before one that throws, with its error', async () => {
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), {
      code: '57014',
    });
    expect(
      await runInBatches({ batchSize: 10, budgetMs: 60_000, runBatch: batches(10, 10, timeout) }),
    ).toEqual({ total: 20, batches: 2, outOfTime: false, failure: { error: timeout } });
  });

  it('runs one batch on a zero budget and says work is left over', async () => {
    expect(await runInBatches({ batchSize: 10, budgetMs: 0, runBatch: batches(10, 10) })).toEqual({
      total: 10,
      batches: 1,
      outOfTime: true,
    });
  });

  it('stops when told to, without calling it out of time', async () => {
    expect(
      await runInBatches({
        batchSize: 10,
        budgetMs: 60_000,
        runBatch: batches(10, 10, 10),
        shouldStop: () => true,
      }),
    ).toEqual({ total: 10, batches: 1, outOfTime: false });
  });
});
