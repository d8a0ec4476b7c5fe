import type { Db } from '../db/database.js';
import { withdrawTasks, type NewTask } from '../rows/task-repository.js';

/** Withdraws creates whose callers were told they failed (see withdrawTasks), retrying on failure. */
export interface Withdrawals {
  /**
   * Resolves after the first attempt, whatever its outcome (never rejects): true if the tasks are
   * withdrawn. A failed attempt is sent again in the background, with backoff, until it succeeds
   * or `retryForMs` has passed (then `onGiveUp` is told: those tasks may run).
   */
  withdraw(inputs: readonly NewTask[]): Promise<boolean>;
  /** Resolves when no withdraw is being retried. */
  settle(): Promise<void>;
}

export interface WithdrawalOptions {
  db: Db;
  /**
   * How long a failed withdraw keeps being retried. It must end before the sweeper would run an
   * unclaimed task (its wake-up grace): a withdraw that lands later may find the task running.
   */
  retryForMs: number;
  onGiveUp?: (taskIds: readonly string[], error: unknown) => void;
}

const FIRST_RETRY_MS = 50;
const MAX_RETRY_MS = 1_000;

export function createWithdrawals(options: WithdrawalOptions): Withdrawals {
  const { db, retryForMs } = options;
  const retrying = new Set<Promise<void>>();

  const retry = async (inputs: readonly NewTask[], firstError: unknown): Promise<void> => {
    const giveUpAt = Date.now() + retryForMs;
    let delay = FIRST_RETRY_MS;
    let lastError = firstError;
    while (Date.now() + delay < giveUpAt) {
      await new Promise((resolve) => setTimeout(resolve, delay));
      try {
        await withdrawTasks(db, inputs);
        return;
      } catch (error) {
        lastError = error;
        delay = Math.min(delay * 2, MAX_RETRY_MS);
      }
    }
    options.onGiveUp?.(
      inputs.map((input) => input.id),
      lastError,
    );
  };

  return {
    async withdraw(inputs) {
      if (inputs.length === 0) return true;
      try {
        await withdrawTasks(db, inputs);
        return true;
      } catch (error) {
        const pending = retry(inputs, error);
        retrying.add(pending);
        void pending.finally(() => retrying.delete(pending));
        return false;
      }
    },
    async settle() {
      while (retrying.size > 0) await Promise.all(retrying);
    },
  };
}
