import type { Db } from '../db/database.js';
import { StaleLeaseError } from '../errors.js';
import { writeFinal, writeFinals, type FinalWrite } from './fenced-task-writes.js';
import { claimFairly, type Claim, type Fence } from './lease.js';
import { createNaturalBatcher, singleOrShared, type BatchOutcome } from '../db/natural-batcher.js';

/**
 * A worker's claims and last writes, batched naturally (natural-batcher.ts): a lone one goes out
 * at once as its single-row statement; those that arrive while one is in flight share the next
 * statement. Under load a worker running many tasks then pays one round trip and one commit for
 * a batch of claims or of completions instead of one each. Each caller still gets only its own
 * answer, after the statement that carried it committed.
 */
export interface BatchedLeaseWrites {
  /**
   * The claim for one wake-up (claimFairly): the task it names, or the fairest waiting task
   * instead when that one waits in a later round or is not claimable; null when nothing is.
   */
  claim(taskId: string): Promise<Claim | null>;
  /** completeTask / failTask / markCancelled under the fence; StaleLeaseError if it no longer holds. */
  writeFinal(fence: Fence, write: FinalWrite): Promise<void>;
}

export interface BatchedLeaseWritesOptions {
  db: Db;
  workerId: string;
  leaseMs: number;
  /** Claims, and last writes, per statement at most; default 64. */
  maxBatchSize?: number;
}

export function createBatchedLeaseWrites(options: BatchedLeaseWritesOptions): BatchedLeaseWrites {
  const { db, workerId, leaseMs, maxBatchSize = 64 } = options;

  // The same statement for one wake-up or many; a shared one the database refuses (a lost
  // deadlock) goes again one wake-up at a time, so each caller gets its own answer.
  const claim = createNaturalBatcher<string, Claim | null>({
    maxBatchSize,
    run: singleOrShared({
      single: async (taskId) => (await claimFairly(db, [taskId], workerId, leaseMs))[0] ?? null,
      shared: async (taskIds) =>
        (await claimFairly(db, taskIds, workerId, leaseMs)).map((value) => ({ ok: true, value })),
    }),
  });

  const final = createNaturalBatcher<{ fence: Fence; write: FinalWrite }, void>({
    maxBatchSize,
    run: singleOrShared({
      single: ({ fence, write }) => writeFinal(db, fence, write),
      shared: async (entries) => {
        const sorted = [...entries].sort((a, b) => (a.fence.taskId < b.fence.taskId ? -1 : 1));
        const held = await writeFinals(db, sorted);
        return entries.map(({ fence }): BatchOutcome<void> =>
          held.has(`${fence.taskId}:${fence.epoch}`)
            ? { ok: true, value: undefined }
            : { ok: false, error: new StaleLeaseError(fence.taskId, fence.epoch) },
        );
      },
    }),
  });

  return {
    claim,
    writeFinal: (fence, write) => final({ fence, write }),
  };
}
