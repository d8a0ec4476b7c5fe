import { performance } from 'node:perf_hooks';
import { StaleLeaseError, renewLease, type Db, type Fence } from '@mcp-tasks/store';
import type { Logger } from '../logger.js';

export interface LeaseKeeper {
  /**
   * The local lease deadline, on the `performance.now()` clock: when the last claim or renewal
   * that succeeded was SENT, plus the lease, minus the stop margin. Until then no other worker can
   * have claimed the task (see startLeaseKeeper); after it, this worker can no longer assume so.
   */
  deadline(): number;
  /** Counts a renewal made outside the keeper (the runner's, before each step), sent at sentAt. */
  confirmed(sentAt: number): void;
  /**
   * False once the deadline has passed (at `at`, default now), and then stops the step (onLeaseUnconfirmed) at once.
   * Call it before a step starts and before anything a step did is logged or written: a process
   * resumed from SIGSTOP runs all its overdue timers in due order, so the step's own timer can
   * finish the step before the keeper's deadline timer gets its turn.
   */
  stillHeld(at?: number): boolean;
  stop(): void;
}

/**
 * How long before the lease runs out an unconfirmed step is stopped: a fifth of the lease, at
 * least 100 ms. Stopping is cooperative (the step sees its signal), so it needs this head start
 * to be over before another worker may claim; otherwise one step could briefly run twice.
 */
export function stopMarginMs(leaseMs: number): number {
  return Math.max(100, Math.floor(leaseMs / 5));
}

interface LeaseKeeperOptions {
  db: Db;
  fence: Fence;
  leaseMs: number;
  logger: Logger;
  /** performance.now() when the claim that granted the lease was sent; default now. */
  heldSince?: number;
  onCancelRequested(): void;
  onLeaseLost(): void;
  onLeaseUnconfirmed(): void;
}

/**
 * Renews a held lease every leaseMs/3 while a step runs. A renewal that reports a cancel request
 * fires onCancelRequested; a StaleLeaseError (someone claimed after us, or the task ended) fires
 * onLeaseLost; no confirmed renewal for a lease period minus the stop margin (we can soon no
 * longer prove we hold it, typically a Postgres outage) fires onLeaseUnconfirmed. Only one of the
 * two fires, once. Renewals never overlap. The period is counted from when the last successful
 * renewal was SENT (the database set the expiry then, not when we heard back), on the monotonic
 * clock (a wall clock stepped by NTP or a VM resume must not stop or prolong a step), and by a
 * timer of its own, so a renewal that hangs cannot keep a lost lease looking held.
 *
 * Why no other worker can be in before our deadline: a claim or renewal sets
 * `lease_expires_at = now() + LEASE_MS` with Postgres's clock at the time the statement ran, which
 * is after we sent it; another worker's claim needs `lease_expires_at <= now()`, again by Postgres's
 * clock. So a takeover happens at least LEASE_MS of Postgres time after our send, and our deadline
 * is LEASE_MS minus the margin of our monotonic time after it. This assumes the Postgres clock does
 * not jump forward and that both clocks run at the same rate within the margin over one lease
 * (NTP slews by at most 0.05 %; the margin is a fifth of the lease); our own wall clock plays no
 * part.
 */
export function startLeaseKeeper(options: LeaseKeeperOptions): LeaseKeeper {
  const { db, fence, leaseMs, logger } = options;
  const confirmedForMs = leaseMs - stopMarginMs(leaseMs);
  let confirmedSentAt = options.heldSince ?? performance.now();
  let inFlight = false;
  let stopped = false;
  let deadline: NodeJS.Timeout | undefined;

  const deadlineAt = (): number => confirmedSentAt + confirmedForMs;
  const stop = (): void => {
    stopped = true;
    clearInterval(renewals);
    if (deadline !== undefined) clearTimeout(deadline);
  };
  const lose = (notify: () => void): void => {
    if (stopped) return;
    stop();
    notify();
  };
  const armDeadline = (): void => {
    if (deadline !== undefined) clearTimeout(deadline);
    const remaining = deadlineAt() - performance.now();
    deadline = setTimeout(
      () => {
        if (stopped) return;
        if (performance.now() < deadlineAt()) {
          armDeadline();
          return;
        }
        logger.warn(
          { taskId: fence.taskId },
          'no confirmed lease renewal for a lease period; stopping the step before it runs out',
        );
        lose(() => options.onLeaseUnconfirmed());
      },
      Math.max(0, remaining),
    );
    deadline.unref();
  };

  const renewals = setInterval(
    () => {
      if (stopped || inFlight) return;
      inFlight = true;
      const sentAt = performance.now();
      renewLease(db, fence, leaseMs)
        .then(({ cancelRequested }) => {
          if (stopped) return;
          confirmedSentAt = Math.max(confirmedSentAt, sentAt);
          armDeadline();
          if (cancelRequested) options.onCancelRequested();
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
  renewals.unref();
  armDeadline();
  return {
    deadline: deadlineAt,
    confirmed(sentAt) {
      if (stopped) return;
      confirmedSentAt = Math.max(confirmedSentAt, sentAt);
      armDeadline();
    },
    stillHeld(at = performance.now()) {
      if (at < deadlineAt()) return true;
      if (!stopped) {
        logger.warn(
          { taskId: fence.taskId },
          'lease deadline passed (the process was stalled or renewals went unconfirmed); stopping the step',
        );
        lose(() => options.onLeaseUnconfirmed());
      }
      return false;
    },
    stop,
  };
}
