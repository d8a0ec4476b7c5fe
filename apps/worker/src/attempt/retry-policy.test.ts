import { describe, expect, it } from 'vitest';
import { budgetSpentAtClaim, decideAfterUnexpectedError } from './retry-policy.js';

const policy = { maxAttempts: 3, baseDelayMs: 250, maxDelayMs: 1_000 };

describe('budgetSpentAtClaim', () => {
  it('lets a claim run until failures reach maxAttempts, then gives the -32603 error', () => {
    expect(budgetSpentAtClaim(2, policy)).toBeNull();
    expect(budgetSpentAtClaim(3, policy)).toEqual({
      code: -32603,
      message: "internal error after 3 attempts: the task's worker was lost",
    });
  });
});

describe('decideAfterUnexpectedError', () => {
  it('retries with doubling backoff while attempts remain', () => {
    expect(decideAfterUnexpectedError(1, policy)).toEqual({ kind: 'retry', delayMs: 250 });
    expect(decideAfterUnexpectedError(2, policy)).toEqual({ kind: 'retry', delayMs: 500 });
  });

  it('caps the backoff', () => {
    expect(decideAfterUnexpectedError(4, { ...policy, maxAttempts: 10 })).toEqual({
      kind: 'retry',
      delayMs: 1_000,
    });
  });

  it('gives up with a JSON-RPC internal error naming the attempts once the budget is spent', () => {
    expect(decideAfterUnexpectedError(3, policy)).toEqual({
      kind: 'fail',
      error: { code: -32603, message: 'internal error after 3 attempts' },
    });
    expect(decideAfterUnexpectedError(1, { ...policy, maxAttempts: 1 })).toMatchObject({
      kind: 'fail',
    });
  });
});
