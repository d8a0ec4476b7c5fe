import type { Db } from '../db/database.js';
import { wakeOrphans, type WakeUpQueue } from '../wake-up/outbox.js';
import { DEFAULT_SWEEP_BATCH, findOrphans } from './sweeper-repository.js';

/** Older than this since their last change, unheld `working` tasks count as orphans by default. */
const DEFAULT_WAKE_UP_GRACE_MS = 30_000;

/** One batch of the sweeper's orphan wake-ups. */
export interface OrphanSweep {
  /** Orphans found (at most the limit). */
  found: number;
  /** Of those, how many got a new wake-up. */
  woken: number;
  /** How many could not be woken (they stay orphans for the next sweep). */
  failed: number;
}

/**
 * The sweeper's door into the store: it finds orphans and wakes them (the outbox's wakeOrphans,
 * which marks what it woke; no outbox is built). Nothing else of the task service.
 */
export interface OrphanWaker {
  /**
   * Wakes one batch of orphans (at most `limit`, default batchSize) and marks them enqueued.
   * `expiredLeases: false` leaves out tasks whose lease ran out (see findOrphans).
   */
  wakeOrphans(
    now: Date,
    options?: { limit?: number; expiredLeases?: boolean },
  ): Promise<OrphanSweep>;
}

export interface OrphanWakerOptions {
  db: Db;
  wakeUpQueue: WakeUpQueue;
  /** Told about a wake-up (or mark) that failed; the task stays an orphan for the next sweep. */
  onWakeUpError?: (taskId: string, error: unknown) => void;
  /** Told about a batch that failed as a whole; default: onWakeUpError for each task. */
  onSweepBatchError?: (taskIds: readonly string[], error: unknown) => void;
  /** How long a task's last change must be past before it counts as an orphan; default 30 s. */
  wakeUpGraceMs?: number;
  /** Orphans handled per wakeOrphans call unless it names a limit. */
  batchSize?: number;
}

export function createOrphanWaker(options: OrphanWakerOptions): OrphanWaker {
  const { db } = options;
  const wakeUpGraceMs = options.wakeUpGraceMs ?? DEFAULT_WAKE_UP_GRACE_MS;
  const batchSize = options.batchSize ?? DEFAULT_SWEEP_BATCH;
  return {
    async wakeOrphans(now, { limit = batchSize, expiredLeases = true } = {}) {
      const orphans = await findOrphans(db, now, { wakeUpGraceMs, limit, expiredLeases });
      const found = orphans.length;
      if (found === 0) return { found, woken: 0, failed: 0 };
      return { found, ...(await wakeOrphans(options, orphans)) };
    },
  };
}
