import type { InputResponses, TaskOwner } from '@mcp-tasks/tasks';
import type { Db } from '../db/database.js';
import { createNaturalBatcher, type BatchOutcome } from '../db/natural-batcher.js';
import {
  isLockNotAvailable,
  recordInputResponses,
  recordManyInputResponses,
  type InputResponsesWrite,
} from '../rows/task-repository.js';

export type InputAnswerOutcome = { found: boolean; resumed: boolean };

/** A write's outcome from its batch, or from its own statement sent after the batch failed. */
type BatchedAnswer = InputAnswerOutcome | { later: Promise<BatchOutcome<InputAnswerOutcome>> };

/**
 * tasks/update's writes, batched naturally (natural-batcher.ts): the answers that arrive while a
 * statement is in flight share the next one (recordManyInputResponses; a lone answer goes at once
 * in a statement of its own). Each caller is answered after the statement that carried its answer
 * committed, with its own outcome.
 *
 * The shared statement never waits for a row lock. When a row is held (or the statement failed
 * for several writes at once), each of its writes goes again on its own with recordInputResponses,
 * which waits for its lock as a lone update always did, outside the batch: the answers queued
 * behind are not held up by one busy row.
 */
export function createInputAnswers(
  db: Db,
  maxBatchSize: number,
): (owner: TaskOwner, taskId: string, responses: InputResponses) => Promise<InputAnswerOutcome> {
  const alone = (write: InputResponsesWrite): Promise<BatchOutcome<InputAnswerOutcome>> =>
    recordInputResponses(db, write.owner, write.taskId, write.responses).then(
      (value) => ({ ok: true, value }),
      (error: unknown) => ({ ok: false, error }),
    );
  const record = createNaturalBatcher<InputResponsesWrite, BatchedAnswer>({
    maxBatchSize,
    run: async (writes) => {
      const outcomes: BatchOutcome<BatchedAnswer>[] = [];
      // A statement updates a row once: answers to the same task go in rounds, in arrival order,
      // each after the previous one committed (as two lone calls serialize on the row lock).
      for (const entries of rounds(writes)) {
        const round = entries.map((entry) => entry.write);
        let answered: BatchOutcome<BatchedAnswer>[];
        try {
          answered = (await recordManyInputResponses(db, round)).map((value) => ({
            ok: true,
            value,
          }));
        } catch (error) {
          // A lone write that failed for any other reason has its answer: that error.
          answered =
            round.length === 1 && !isLockNotAvailable(error)
              ? [{ ok: false, error }]
              : round.map((write) => ({ ok: true, value: { later: alone(write) } }));
        }
        entries.forEach((entry, index) => (outcomes[entry.index] = answered[index]!));
      }
      return outcomes;
    },
  });
  return async (owner, taskId, responses) => {
    const answer = await record({ owner, taskId, responses });
    if (!('later' in answer)) return answer;
    const outcome = await answer.later;
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  };
}

/** The writes split so that no round names a task twice; each keeps its index in `writes`. */
function rounds(
  writes: readonly InputResponsesWrite[],
): { write: InputResponsesWrite; index: number }[][] {
  const result: { write: InputResponsesWrite; index: number }[][] = [];
  const seen = new Map<string, number>();
  writes.forEach((write, index) => {
    const round = seen.get(write.taskId) ?? 0;
    seen.set(write.taskId, round + 1);
    (result[round] ??= []).push({ write, index });
  });
  return result;
}
