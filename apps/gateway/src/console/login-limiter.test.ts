import { describe, expect, it } from 'vitest';
import { createLoginLimiter } from './login-limiter.js';

describe('the console login limiter', () => {
  const limits = { maxFailures: 2, windowMs: 10_000 };

  it('limits one address whatever tokens it tries, until its window ends', () => {
    const limiter = createLoginLimiter(limits);
    limiter.failed('10.0.0.1', 'aaaaaaaa-1', 0);
    expect(limiter.check('10.0.0.1', 'bbbbbbbb-1', 1_000)).toBeUndefined();
    limiter.failed('10.0.0.1', 'bbbbbbbb-1', 1_000);
    expect(limiter.check('10.0.0.1', 'cccccccc-1', 2_000)).toBe(8);
    expect(limiter.check('10.0.0.2', 'cccccccc-1', 2_000)).toBeUndefined();
    expect(limiter.check('10.0.0.1', 'cccccccc-1', 10_000)).toBeUndefined();
  });

  it('limits one token prefix from any number of addresses', () => {
    const limiter = createLoginLimiter(limits);
    limiter.failed('10.0.0.1', 'ops-root-guess-1', 0);
    limiter.failed('10.0.0.2', 'ops-root-guess-2', 0);
    expect(limiter.check('10.0.0.3', 'ops-root-guess-3', 500)).toBe(10);
    expect(limiter.check('10.0.0.3', 'other-token-1', 500)).toBeUndefined();
  });
});
