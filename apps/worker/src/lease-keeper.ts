import { StaleLeaseError, renewLease, type Db, type Fence } from '@mcp-tasks/store';
import type { Logger } from './logger.js';

export interface LeaseKeeper {
  stop(): void;
}

/**
 * Renews a held lease every leaseMs/3 while a step runs. A renewal that reports a cancel request
 * fires onCancelRequested; a StaleLeaseError (someone claimed after us, or the task ended), or no
 * successful renewal for a whole lease period (we can no longer prove we hold it), fires
 * onLeaseLost. Renewals never overlap.
 */
export function startLeaseKeeper(options: {
  db: Db;
  fence: Fence;
  leaseMs: number;
  logger: Logger;
  onCancelRequested(): void;
  onLeaseLost(): void;
}): LeaseKeeper {
  const { db, fence, leaseMs, logger } = options;
  let lastRenewed = Date.now();
  let inFlight = false;
  let stopped = false;
  const timer = setInterval(
    () => {
      if (inFlight || stopped) return;
      inFlight = true;
      renewLease(db, fence, leaseMs)
        .then(({ cancelRequested }) => {
          lastRenewed = Date.now();
          if (cancelRequested && !stopped) options.onCancelRequested();
        })
        .catch((error: unknown) => {
          if (stopped) return;
          if (error instanceof StaleLeaseError) {
            options.onLeaseLost();
            return;
          }
          logger.warn({ err: error, taskId: fence.taskId }, 'lease renewal failed');
          if (Date.now() - lastRenewed >= leaseMs) options.onLeaseLost();
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
