import type { Db } from './database.js';
import { ReplicaLagError } from '../errors.js';
import { replicaPollStatement } from '../sql/infrastructure.js';

const FIRST_DELAY_MS = 2;
const MAX_DELAY_MS = 50;

/**
 * Errors that mean "not there yet", not "broken": the replica has not replayed the migration that
 * made the table (42P01) or added a column the read selects (42703), or cancelled the read for a
 * conflict with replay (40001). The primary has what the replica lacks.
 */
const NOT_READABLE_YET = new Set(['42P01', '42703', '40001']);
export const replicaNotCaughtUp = (error: unknown): boolean =>
  NOT_READABLE_YET.has(String((error as { code?: unknown } | null)?.code));

/** Waits until tasks are readable on a read replica (R11); one poll serves every waiting task. */
export interface ReplicaWaiter {
  /** Resolves once a read on the replica finds the task; ReplicaLagError after the bound. */
  waitUntilReadable(taskId: string): Promise<void>;
}

/**
 * R11: a handle goes out only once a read on the replica finds the row. One loop polls the
 * replica for the rows themselves, all waiting tasks in one query, with a short backoff, and
 * settles each task when its row shows up or its own bound passes. A task that arrives while the
 * loop sleeps cuts the sleep short (its first poll is not delayed by others' backoff); tasks that
 * arrive while a poll is in flight join the next one (natural batching, as for inserts).
 *
 * Why rows and not a WAL position: on a hot standby the row becomes readable when the commit
 * record is replayed, and that record is written after the INSERT statement has ended. Any
 * position the INSERT itself could return (`RETURNING pg_current_wal_insert_lsn()`) lies before
 * the commit record, so a replica that replayed up to it may still hide the row; the commit's own
 * end position is only known to a statement run after COMMIT — a second round trip on the primary
 * for every create. Asking the replica for the rows is the condition itself, costs the primary
 * nothing, and a `readDb` that is a primary answers on the first poll.
 */
export function createReplicaWaiter(readDb: Db, options: { timeoutMs: number }): ReplicaWaiter {
  interface Waiting {
    taskId: string;
    deadline: number;
    resolve(): void;
    reject(error: unknown): void;
  }
  const waiting = new Map<string, Waiting[]>();
  let looping = false;
  let arrived = false;
  let wake: (() => void) | undefined;
  /**
   * The replica's replay position at the last poll that answered: a deadline that passes while a
   * poll is in flight (or just before the next one) still names how far the replica had got.
   */
  let lastReplay: string | null = null;

  const settle = (taskId: string, error?: unknown): void => {
    for (const entry of waiting.get(taskId) ?? []) {
      if (error === undefined) entry.resolve();
      else entry.reject(error);
    }
    waiting.delete(taskId);
  };

  const expireLate = (replay: string | null): void => {
    const now = Date.now();
    for (const [taskId, entries] of waiting) {
      const late = entries.filter((entry) => entry.deadline <= now);
      if (late.length === 0) continue;
      const error = new ReplicaLagError(taskId, options.timeoutMs, replay);
      for (const entry of late) entry.reject(error);
      const left = entries.filter((entry) => entry.deadline > now);
      if (left.length === 0) waiting.delete(taskId);
      else waiting.set(taskId, left);
    }
  };

  const poll = async (ids: readonly string[]): Promise<void> => {
    const result = await replicaPollStatement({ ids }).execute(readDb);
    const row = result.rows[0];
    for (const id of row?.ids ?? []) settle(id);
    lastReplay = row?.replay ?? lastReplay;
    expireLate(lastReplay);
  };

  /**
   * While a poll is in flight (a replica that stopped answering holds it until the pool's read
   * timeout), each waiting task still gets its ReplicaLagError at its own deadline.
   */
  const pollWithinDeadlines = async (ids: readonly string[]): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      const nearest = nearestDeadline();
      if (nearest === undefined) return;
      timer = setTimeout(
        () => {
          expireLate(lastReplay);
          arm();
        },
        Math.max(0, nearest - Date.now()),
      );
    };
    arm();
    try {
      await poll(ids);
    } finally {
      clearTimeout(timer);
    }
  };

  const nearestDeadline = (): number | undefined => {
    let nearest: number | undefined;
    for (const entries of waiting.values()) {
      for (const entry of entries) {
        if (nearest === undefined || entry.deadline < nearest) nearest = entry.deadline;
      }
    }
    return nearest;
  };

  const loop = async (): Promise<void> => {
    try {
      await pollUntilSettled();
    } finally {
      // Whatever happened, the next waiter starts a loop of its own instead of waiting forever.
      looping = false;
      if (waiting.size > 0) {
        looping = true;
        queueMicrotask(() => void loop());
      }
    }
  };

  const pollUntilSettled = async (): Promise<void> => {
    let delay = FIRST_DELAY_MS;
    while (waiting.size > 0) {
      arrived = false;
      const ids = [...waiting.keys()];
      try {
        await pollWithinDeadlines(ids);
      } catch (error) {
        if (replicaNotCaughtUp(error)) {
          expireLate(lastReplay);
        } else {
          // The replica is unreachable or refused the query: the tasks this poll was for get the
          // error; those that arrived while it was in flight get a poll of their own.
          for (const taskId of ids) settle(taskId, error);
          break;
        }
      }
      if (waiting.size === 0) break;
      if (arrived) {
        delay = FIRST_DELAY_MS;
        continue;
      }
      const nearest = nearestDeadline() ?? Date.now();
      const sleepMs = Math.max(0, Math.min(delay, nearest - Date.now()));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, sleepMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
      delay = arrived ? FIRST_DELAY_MS : Math.min(delay * 2, MAX_DELAY_MS);
    }
  };

  return {
    waitUntilReadable(taskId) {
      return new Promise<void>((resolve, reject) => {
        const entry = { taskId, deadline: Date.now() + options.timeoutMs, resolve, reject };
        waiting.set(taskId, [...(waiting.get(taskId) ?? []), entry]);
        arrived = true;
        if (wake !== undefined) wake();
        if (!looping) {
          looping = true;
          queueMicrotask(() => void loop());
        }
      });
    },
  };
}
