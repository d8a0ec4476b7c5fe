import { isRetryable, retryAfterOf } from './errors.js';

/** How long to wait between attempts; data, so tests and callers can shorten it. */
export interface BackoffPolicy {
  /** First retry delay after a network error or 5xx. */
  initialMs: number;
  /** Cap on any single delay, including a server's `Retry-After`. */
  maxMs: number;
  /** Poll interval when the server gives no `pollIntervalMs`. */
  defaultPollMs: number;
  /** Fraction of the poll interval added or removed at random, so many clients spread out. */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  initialMs: 250,
  maxMs: 30_000,
  defaultPollMs: 1000,
  jitter: 0.1,
};

/** Capped exponential backoff with full jitter; a server hint (`Retry-After`) wins when larger. */
export function retryDelay(
  policy: BackoffPolicy,
  attempt: number,
  serverHintMs?: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(attempt, 20));
  const computed = Math.round(ceiling * (0.5 + random() / 2));
  return Math.min(policy.maxMs, Math.max(computed, serverHintMs ?? 0));
}

/** The server's `pollIntervalMs` (or the default), spread by ± jitter. */
export function pollDelay(
  policy: BackoffPolicy,
  pollIntervalMs: number | undefined,
  random: () => number = Math.random,
): number {
  const base = pollIntervalMs ?? policy.defaultPollMs;
  return Math.max(0, Math.round(base * (1 + policy.jitter * (2 * random() - 1))));
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Sends `attempt()` again on retryable failures, with capped backoff and `Retry-After`. */
export async function withRetry<T>(
  policy: BackoffPolicy,
  attempt: () => Promise<T>,
  signal?: AbortSignal,
  onRetry?: (error: unknown, delayMs: number) => void,
): Promise<T> {
  for (let failures = 0; ; failures += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (!isRetryable(error) || signal?.aborted) throw error;
      const delay = retryDelay(policy, failures, retryAfterOf(error));
      onRetry?.(error, delay);
      await sleep(delay, signal);
    }
  }
}
