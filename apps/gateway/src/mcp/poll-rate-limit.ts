/**
 * R20: the server may rate-limit polling faster than pollIntervalMs. A token bucket per key
 * (see PollLimits): a burst of `burst` polls, then one per interval. Held in memory per
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

/** A principal may poll this many tasks at their interval before its own bucket runs dry. */
export const PRINCIPAL_POLLS_PER_INTERVAL = 10;

/**
 * The two buckets of tasks/get: one per (tenant, principal), taken before the database read so
 * throttled polls cost nothing and polling many tasks is bounded too (a burst of 20, refilled
 * PRINCIPAL_POLLS_PER_INTERVAL times per default pollIntervalMs); then one per task at that
 * task's own pollIntervalMs.
 */
export interface PollLimits {
  principal: PollRateLimiter;
  task: PollRateLimiter;
}

export function createPollLimits(): PollLimits {
  return {
    principal: createPollRateLimiter({ burst: 2 * PRINCIPAL_POLLS_PER_INTERVAL }),
    task: createPollRateLimiter(),
  };
}
