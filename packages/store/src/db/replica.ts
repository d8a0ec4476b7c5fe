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
  const polls = new ReplicaPolls(readDb, options);
  return {
    waitUntilReadable(taskId) {
      return polls.waitUntilReadable(taskId);
    },
  };
}

/** A task waiting for its row on the replica; one per waitUntilReadable call. */
interface Waiting {
  taskId: string;
  deadline: number;
  resolve(): void;
  reject(error: unknown): void;
}

/** The state of one replica waiter: its waiting tasks and the single poll loop that serves them. */
class ReplicaPolls {
  private readonly readDb: Db;
  private readonly options: { timeoutMs: number };
  private readonly waiting = new Map<string, Waiting[]>();
  private looping = false;
  private arrived = false;
  private wake: (() => void) | undefined;
  /**
   * The replica's replay position at the last poll that answered: a deadline that passes while a
   * poll is in flight (or just before the next one) still names how far the replica had got.
   */
  private lastReplay: string | null = null;

  constructor(readDb: Db, options: { timeoutMs: number }) {
    this.readDb = readDb;
    this.options = options;
  }

  private settle(taskId: string, error?: unknown): void {
    for (const entry of this.waiting.get(taskId) ?? []) {
      if (error === undefined) entry.resolve();
      else entry.reject(error);
    }
    this.waiting.delete(taskId);
  }

  private expireLate(replay: string | null): void {
    const now = Date.now();
    for (const [taskId, entries] of this.waiting) {
      const late = entries.filter((entry) => entry.deadline <= now);
      if (late.length === 0) continue;
      const error = new ReplicaLagError(taskId, this.options.timeoutMs, replay);
      for (const entry of late) entry.reject(error);
      const left = entries.filter((entry) => entry.deadline > now);
      if (left.length === 0) this.waiting.delete(taskId);
      else this.waiting.set(taskId, left);
    }
  }

  private async poll(ids: readonly string[]): Promise<void> {
    const result = await replicaPollStatement({ ids }).execute(this.readDb);
    const row = result.rows[0];
    for (const id of row?.ids ?? []) this.settle(id);
    this.lastReplay = row?.replay ?? this.lastReplay;
    this.expireLate(this.lastReplay);
  }

  /**
   * While a poll is in flight (a replica that stopped answering holds it until the pool's read
   * timeout), each waiting task still gets its ReplicaLagError at its own deadline.
   */
  private async pollWithinDeadlines(ids: readonly string[]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      const nearest = this.nearestDeadline();
      if (nearest === undefined) return;
      timer = setTimeout(
        () => {
          this.expireLate(this.lastReplay);
          arm();
        },
        Math.max(0, nearest - Date.now()),
      );
    };
    arm();
    try {
      await this.poll(ids);
    } finally {
      clearTimeout(timer);
    }
  }

  private nearestDeadline(): number | undefined {
    let nearest: number | undefined;
    for (const entries of this.waiting.values()) {
      for (const entry of entries) {
        if (nearest === undefined || entry.deadline < nearest) nearest = entry.deadline;
      }
    }
    return nearest;
  }

  private async loop(): Promise<void> {
    try {
      await this.pollUntilSettled();
    } finally {
      // Whatever happened, the next waiter starts a loop of its own instead of waiting forever.
      this.looping = false;
      if (this.waiting.size > 0) {
        this.looping = true;
        queueMicrotask(() => void this.loop());
      }
    }
  }

  private async pollUntilSettled(): Promise<void> {
    let delay = FIRST_DELAY_MS;
    while (this.waiting.size > 0) {
      this.arrived = false;
      const ids = [...this.waiting.keys()];
      try {
        await this.pollWithinDeadlines(ids);
      } catch (error) {
        if (replicaNotCaughtUp(error)) {
          this.expireLate(this.lastReplay);
        } else {
          // The replica is unreachable or refused the query: the tasks this poll was for get the
          // error; those that arrived while it was in flight get a poll of their own.
          for (const taskId of ids) this.settle(taskId, error);
          break;
        }
      }
      if (this.waiting.size === 0) break;
      if (this.arrived) {
        delay = FIRST_DELAY_MS;
        continue;
      }
      const nearest = this.nearestDeadline() ?? Date.now();
      const sleepMs = Math.max(0, Math.min(delay, nearest - Date.now()));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, sleepMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
      delay = this.arrived ? FIRST_DELAY_MS : Math.min(delay * 2, MAX_DELAY_MS);
    }
  }

  /** Registers the task and starts the loop if none runs (see createReplicaWaiter). */
  waitUntilReadable(taskId: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const entry = { taskId, deadline: Date.now() + this.options.timeoutMs, resolve, reject };
      this.waiting.set(taskId, [...(this.waiting.get(taskId) ?? []), entry]);
      this.arrived = true;
      if (this.wake !== undefined) this.wake();
      if (!this.looping) {
        this.looping = true;
        queueMicrotask(() => void this.loop());
      }
    });
  }
}
