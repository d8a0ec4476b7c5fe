import { describe, expect, it } from 'vitest';
import { createPollRateLimiter } from './poll-rate-limit.js';

describe('poll rate limiter', () => {
  it('allows a burst, then one poll per interval', () => {
    const time = { now: 0 };
    const limiter = createPollRateLimiter({ burst: 2, now: () => time.now });
    expect(limiter.take('k', 1000)).toBe(0);
    expect(limiter.take('k', 1000)).toBe(0);
    expect(limiter.take('k', 1000)).toBe(1000);
    time.now = 500;
    expect(limiter.take('k', 1000)).toBe(500);
    time.now = 1000;
    expect(limiter.take('k', 1000)).toBe(0);
  });

  it('keeps keys apart', () => {
    const limiter = createPollRateLimiter({ burst: 1, now: () => 0 });
    expect(limiter.take('a', 1000)).toBe(0);
    expect(limiter.take('b', 1000)).toBe(0);
    expect(limiter.take('a', 1000)).toBeGreaterThan(0);
  });
});
