/**
 * R20: the server may rate-limit polling faster than pollIntervalMs. A token bucket per
 * (tenant, principal, task): a burst of `burst` polls, then one per interval. Held in memory per
 * replica, so a client spreading polls over N replicas gets N times the rate; that bounds abuse
 * well enough without a shared store on the hot path.
 */
export interface PollRateLimiter {
  /** 0 when the poll may proceed, else how many ms until it would. */
  take(key: string, intervalMs: number): number;
}

export function createPollRateLimiter(
  options: { burst?: number; now?: () => number; maxKeys?: number } = {},
): PollRateLimiter {
  const burst = options.burst ?? 5;
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? 100_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(key, intervalMs) {
      const t = now();
      const bucket = buckets.get(key) ?? { tokens: burst, at: t };
      const tokens = Math.min(burst, bucket.tokens + (t - bucket.at) / intervalMs);
      if (tokens < 1) {
        buckets.set(key, { tokens, at: t });
        return Math.ceil((1 - tokens) * intervalMs);
      }
      // Oldest-first eviction keeps memory bounded; an evicted key just starts with a full bucket.
      if (!buckets.has(key) && buckets.size >= maxKeys) {
        const oldest = buckets.keys().next().value;
        if (oldest !== undefined) buckets.delete(oldest);
      }
      buckets.delete(key);
      buckets.set(key, { tokens: tokens - 1, at: t });
      return 0;
    },
  };
}
