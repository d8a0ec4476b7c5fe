import { setTimeout as delay } from 'node:timers/promises';

/**
 * Waits `ms`, or rejects as soon as `signal` aborts (with an AbortError), so a cancelled or
 * fenced-out step stops at once instead of finishing its sleep.
 */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) {
    signal.throwIfAborted();
    return;
  }
  await delay(ms, undefined, { signal });
}
