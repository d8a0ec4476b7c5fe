import { StaleLeaseError, renewLease, type Db, type Fence } from '@mcp-tasks/store';
import type { Logger } from './logger.js';

export interface LeaseKeeper {
  stop(): void;
}

/**
 * Renews a held lease every leaseMs/3 while a step runs. A renewal that reports a cancel request
 * fires onCancelRequested; a StaleLeaseError (someone claimed after us, or the task ended) fires
 * onLeaseLost; no confirmed renewal for a whole lease period (we can no longer prove we hold it,
 * typically a Postgres outage) fires onLeaseUnconfirmed. Only one of the two fires, once. Renewals never overlap. The lease period is counted from when the last
 * successful renewal was SENT (the database set the expiry then, not when we heard back), and it
 * is checked on every tick, so a renewal that hangs cannot keep a lost lease looking held.
 */
export function startLeaseKeeper(options: {
  db: Db;
  fence: Fence;
  leaseMs: number;
  logger: Logger;
  /** When the claim that granted the lease was sent; default now. */
  heldSince?: number;
  onCancelRequested(): void;
  onLeaseLost(): void;
  onLeaseUnconfirmed(): void;
}): LeaseKeeper {
  const { db, fence, leaseMs, logger } = options;
  let confirmedSentAt = options.heldSince ?? Date.now();
  let inFlight = false;
  let stopped = false;
  const lose = (notify: () => void): void => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    notify();
  };
  const timer = setInterval(
    () => {
      if (stopped) return;
      if (Date.now() - confirmedSentAt >= leaseMs) {
        logger.warn({ taskId: fence.taskId }, 'no confirmed lease renewal for a lease period');
        lose(() => options.onLeaseUnconfirmed());
        return;
      }
      if (inFlight) return;
      inFlight = true;
      const sentAt = Date.now();
      renewLease(db, fence, leaseMs)
        .then(({ cancelRequested }) => {
          confirmedSentAt = Math.max(confirmedSentAt, sentAt);
          if (cancelRequested && !stopped) options.onCancelRequested();
        })
        .catch((error: unknown) => {
          if (stopped) return;
          if (error instanceof StaleLeaseError) {
            lose(() => options.onLeaseLost());
            return;
          }
          logger.warn({ err: error, taskId: fence.taskId }, 'lease renewal failed');
        })
        .finally(() => {
          inFlight = false;
        });
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
