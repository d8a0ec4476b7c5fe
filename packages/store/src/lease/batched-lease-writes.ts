import type { Db } from '../db/database.js';
import { StaleLeaseError } from '../errors.js';
import {
  requestInput,
  requestInputs,
  saveCheckpoint,
  saveCheckpoints,
  writeFinal,
  writeFinals,
  type CheckpointWrite,
  type FinalWrite,
  type InputPauseWrite,
} from './fenced-task-writes.js';
import { claimFairly, type Claim, type Fence } from './lease.js';
import { createNaturalBatcher, singleOrShared, type BatchOutcome } from '../db/natural-batcher.js';

/**
 * A worker's claims, checkpoints, input pauses and last writes, batched naturally (natural-batcher.ts): a lone one goes out
 * at once as its single-row statement; those that arrive while one is in flight share the next
 * statement. Under load a worker running many tasks then pays one round trip and one commit for
 * a batch of claims, of checkpoints or of completions instead of one each. Each caller still gets only its own
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
  /**
   * saveCheckpoint under the fence, renewing the lease for the worker's lease: resolves once the
   * statement that carried it committed, with whether a cancel was requested; StaleLeaseError if
   * the fence no longer holds. (A checkpoint inside a step's transaction goes on that instead.)
   */
  saveCheckpoint(
    fence: Fence,
    checkpoint: CheckpointWrite['checkpoint'],
    statusMessage: string | null,
    options: { toolVersion?: number },
  ): Promise<{ cancelRequested: boolean }>;
  /**
   * requestInput under the fence: parks the task (or cancels it, if a cancel was requested) once
   * the statement that carried it committed; InputKeyReusedError or StaleLeaseError as there.
   */
  requestInput(
    fence: Fence,
    requests: InputPauseWrite['requests'],
    checkpoint: InputPauseWrite['checkpoint'],
    statusMessage: string | null,
    options: { toolVersion?: number },
  ): Promise<void>;
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

  // The same statement for one wake-up or many; a shared one the database refuses goes again
  // one wake-up at a time, so each caller gets its own answer.
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
        const held = await writeFinals(db, entries);
        return entries.map(({ fence }): BatchOutcome<void> =>
          held.has(`${fence.taskId}:${fence.epoch}`)
            ? { ok: true, value: undefined }
            : { ok: false, error: new StaleLeaseError(fence.taskId, fence.epoch) },
        );
      },
    }),
  });

  const checkpoint = createNaturalBatcher<CheckpointWrite, { cancelRequested: boolean }>({
    maxBatchSize,
    run: singleOrShared({
      single: ({ fence, checkpoint, statusMessage, toolVersion }) =>
        saveCheckpoint(db, fence, checkpoint, statusMessage, { toolVersion, leaseMs }),
      shared: async (entries) => {
        const held = await saveCheckpoints(db, entries, leaseMs);
        return entries.map(({ fence }): BatchOutcome<{ cancelRequested: boolean }> => {
          const saved = held.get(`${fence.taskId}:${fence.epoch}`);
          return saved === undefined
            ? { ok: false, error: new StaleLeaseError(fence.taskId, fence.epoch) }
            : { ok: true, value: saved };
        });
      },
    }),
  });

  const single = (write: InputPauseWrite) =>
    requestInput(db, write.fence, write.requests, write.checkpoint, write.statusMessage, {
      toolVersion: write.toolVersion,
    });
  const pause = createNaturalBatcher<InputPauseWrite, void>({
    maxBatchSize,
    run: singleOrShared({
      single,
      shared: async (entries) => {
        const parked = await requestInputs(db, entries);
        // One that lost changed nothing: its own statement then says why (a reused key, a
        // fence that no longer holds), as a lone pause's would.
        return await Promise.all(
          entries.map(async (entry): Promise<BatchOutcome<void>> => {
            if (parked.has(`${entry.fence.taskId}:${entry.fence.epoch}`))
              return { ok: true, value: undefined };
            try {
              return { ok: true, value: await single(entry) };
            } catch (error) {
              return { ok: false, error };
            }
          }),
        );
      },
    }),
  });

  return {
    claim,
    writeFinal: (fence, write) => final({ fence, write }),
    saveCheckpoint: (fence, state, statusMessage, { toolVersion }) =>
      checkpoint({ fence, checkpoint: state, statusMessage, toolVersion }),
    requestInput: async (fence, requests, state, statusMessage, { toolVersion }) => {
      if (Object.keys(requests).length === 0)
        throw new RangeError('an input round needs at least one request');
      await pause({ fence, requests, checkpoint: state, statusMessage, toolVersion });
    },
  };
}
