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
  return new RenewingLeaseKeeper(options);
}

/** The keeper of one attempt: a renewal interval and a deadline timer, both stopped together. */
class RenewingLeaseKeeper implements LeaseKeeper {
  private readonly confirmedForMs: number;
  private confirmedSentAt: number;
  private inFlight = false;
  private stopped = false;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private readonly renewals: NodeJS.Timeout;

  constructor(private readonly options: LeaseKeeperOptions) {
    const { leaseMs } = options;
    this.confirmedForMs = leaseMs - stopMarginMs(leaseMs);
    this.confirmedSentAt = options.heldSince ?? performance.now();
    this.renewals = setInterval(() => this.renew(), Math.max(50, Math.floor(leaseMs / 3)));
    this.renewals.unref();
    this.armDeadline();
  }

  deadline(): number {
    return this.confirmedSentAt + this.confirmedForMs;
  }

  confirmed(sentAt: number): void {
    if (this.stopped) return;
    this.confirmedSentAt = Math.max(this.confirmedSentAt, sentAt);
    this.armDeadline();
  }

  stillHeld(at = performance.now()): boolean {
    if (at < this.deadline()) return true;
    if (!this.stopped) {
      this.options.logger.warn(
        { taskId: this.options.fence.taskId },
        'lease deadline passed (the process was stalled or renewals went unconfirmed); stopping the step',
      );
      this.lose(() => this.options.onLeaseUnconfirmed());
    }
    return false;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.renewals);
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
  }

  private lose(notify: () => void): void {
    if (this.stopped) return;
    this.stop();
    notify();
  }

  /** (Re)sets the timer that stops the step at the local deadline. */
  private armDeadline(): void {
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    const remaining = this.deadline() - performance.now();
    this.deadlineTimer = setTimeout(() => this.deadlinePassed(), Math.max(0, remaining));
    this.deadlineTimer.unref();
  }

  private deadlinePassed(): void {
    if (this.stopped) return;
    if (performance.now() < this.deadline()) {
      this.armDeadline();
      return;
    }
    this.options.logger.warn(
      { taskId: this.options.fence.taskId },
      'no confirmed lease renewal for a lease period; stopping the step before it runs out',
    );
    this.lose(() => this.options.onLeaseUnconfirmed());
  }

  /** One renewal, unless one is still in flight: renewals never overlap. */
  private renew(): void {
    if (this.stopped || this.inFlight) return;
    this.inFlight = true;
    const { db, fence, leaseMs, logger } = this.options;
    const sentAt = performance.now();
    renewLease(db, fence, leaseMs)
      .then(({ cancelRequested }) => {
        if (this.stopped) return;
        this.confirmedSentAt = Math.max(this.confirmedSentAt, sentAt);
        this.armDeadline();
        if (cancelRequested) this.options.onCancelRequested();
      })
      .catch((error: unknown) => {
        if (this.stopped) return;
        if (error instanceof StaleLeaseError) {
          this.lose(() => this.options.onLeaseLost());
          return;
        }
        logger.warn({ err: error, taskId: fence.taskId }, 'lease renewal failed');
      })
      .finally(() => {
        this.inFlight = false;
      });
  }
}
