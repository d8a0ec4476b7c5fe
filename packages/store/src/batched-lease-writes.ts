import type { Db } from './database.js';
import { StaleLeaseError } from './errors.js';
import { writeFinal, writeFinals, type FinalWrite } from './fenced-task-writes.js';
import { claimLease, claimLeases, type Claim, type Fence } from './lease.js';
import { createNaturalBatcher, type BatchOutcome } from './natural-batcher.js';

/**
 * A worker's claims and last writes, batched naturally (natural-batcher.ts): a lone one goes out
 * at once as its single-row statement; those that arrive while one is in flight share the next
 * statement. Under load a worker running many tasks then pays one round trip and one commit for
 * a batch of claims or of completions instead of one each. Each caller still gets only its own
 * answer, after the statement that carried it committed.
 */
export interface BatchedLeaseWrites {
  /** claimLease: the claim, or null when the task is not claimable (or its id is malformed). */
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

  const claim = createNaturalBatcher<string, Claim | null>({
    maxBatchSize,
    run: async (taskIds) => {
      if (taskIds.length === 1)
        return [await settled(claimLease(db, taskIds[0]!, workerId, leaseMs))];
      const claims = await claimLeases(db, taskIds, workerId, leaseMs).catch(() => undefined);
      // A failed batch (the database refused it, or it lost a deadlock) goes again one by one,
      // so that each claim gets its own answer or its own error.
      if (claims === undefined)
        return await Promise.all(
          taskIds.map((id) => settled(claimLease(db, id, workerId, leaseMs))),
        );
      // The same wake-up delivered twice: only its first delivery runs the attempt.
      return taskIds.map((taskId) => {
        const won = claims.get(taskId) ?? null;
        claims.delete(taskId);
        return { ok: true, value: won };
      });
    },
  });

  const final = createNaturalBatcher<{ fence: Fence; write: FinalWrite }, void>({
    maxBatchSize,
    run: async (entries) => {
      const one = (entry: { fence: Fence; write: FinalWrite }) =>
        settled(writeFinal(db, entry.fence, entry.write));
      if (entries.length === 1) return [await one(entries[0]!)];
      const sorted = [...entries].sort((a, b) => (a.fence.taskId < b.fence.taskId ? -1 : 1));
      const held = await writeFinals(db, sorted).catch(() => undefined);
      if (held === undefined) return await Promise.all(entries.map(one));
      return entries.map(({ fence }): BatchOutcome<void> =>
        held.has(`${fence.taskId}:${fence.epoch}`)
          ? { ok: true, value: undefined }
          : { ok: false, error: new StaleLeaseError(fence.taskId, fence.epoch) },
      );
    },
  });

  return {
    claim,
    writeFinal: (fence, write) => final({ fence, write }),
  };
}

/** A promise's fate as a batch outcome. */
async function settled<T>(promise: Promise<T>): Promise<BatchOutcome<T>> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}
