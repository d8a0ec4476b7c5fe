import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';

/**
 * Failed console logins allowed in one window, counted per client address and per token prefix
 * (the first 8 characters submitted), in this gateway's memory. Only failures count, so an
 * operator who logs in is never slowed; guessing from many addresses at one token family is
 * still capped by the prefix count.
 */
export interface LoginLimits {
  maxFailures: number;
  windowMs: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { maxFailures: 10, windowMs: 60_000 };

/** Counters kept at most; the oldest window is dropped first (a flood of addresses stays bounded). */
const MAX_KEYS = 10_000;
const PREFIX_LENGTH = 8;

export interface LoginLimiter {
  /** Seconds to wait when this address or token prefix is over the limit; undefined: go on. */
  check(address: string, token: string, nowMs: number): number | undefined;
  failed(address: string, token: string, nowMs: number): void;
}

/**
 * The TCP peer's address: not X-Forwarded-For, which any client can write. Behind a proxy every
 * client shares the proxy's address (docs/console.md says so).
 */
export function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown'; // not served by node (Hono's app.request in tests)
  }
}

export function createLoginLimiter(limits: LoginLimits): LoginLimiter {
  const windows = new Map<string, { startMs: number; failures: number }>();
  const keysOf = (address: string, token: string): string[] => [
    `addr:${address}`,
    `prefix:${token.slice(0, PREFIX_LENGTH)}`,
  ];
  const current = (key: string, nowMs: number) => {
    const window = windows.get(key);
    if (window === undefined || nowMs - window.startMs >= limits.windowMs) return undefined;
    return window;
  };
  return {
    check(address, token, nowMs) {
      let waitMs = 0;
      for (const key of keysOf(address, token)) {
        const window = current(key, nowMs);
        if (window !== undefined && window.failures >= limits.maxFailures)
          waitMs = Math.max(waitMs, window.startMs + limits.windowMs - nowMs);
      }
      return waitMs > 0 ? Math.max(1, Math.ceil(waitMs / 1000)) : undefined;
    },
    failed(address, token, nowMs) {
      for (const key of keysOf(address, token)) {
        const window = current(key, nowMs);
        if (window !== undefined) {
          window.failures++;
          continue;
        }
        windows.delete(key);
        if (windows.size >= MAX_KEYS) {
          const oldest = windows.keys().next().value;
          if (oldest !== undefined) windows.delete(oldest);
        }
        windows.set(key, { startMs: nowMs, failures: 1 });
      }
    },
  };
}
