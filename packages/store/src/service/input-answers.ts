import type { InputResponses, TaskOwner } from '@mcp-tasks/tasks';
import type { Db } from '../db/database.js';
import { createNaturalBatcher, singleOrShared, type BatchOutcome } from '../db/natural-batcher.js';
import {
  recordInputResponses,
  recordManyInputResponses,
  type InputResponsesWrite,
} from '../rows/task-repository.js';

export type InputAnswerOutcome = { found: boolean; resumed: boolean };

/**
 * tasks/update's writes, batched naturally (natural-batcher.ts): a lone answer goes at once as
 * recordInputResponses' single-row statement; answers that arrive while one is in flight share
 * the next statement (recordManyInputResponses). Each caller is answered after the statement
 * that carried its answer committed, with its own outcome.
 */
export function createInputAnswers(
  db: Db,
  maxBatchSize: number,
): (owner: TaskOwner, taskId: string, responses: InputResponses) => Promise<InputAnswerOutcome> {
  // One round: a lone write takes its single-row statement, several share one; a shared one the
  // database refuses (a lost deadlock) goes again one write at a time.
  const round = singleOrShared<InputResponsesWrite, InputAnswerOutcome>({
    single: ({ owner, taskId, responses }) => recordInputResponses(db, owner, taskId, responses),
    shared: async (writes) =>
      (await recordManyInputResponses(db, writes)).map((value) => ({ ok: true, value })),
  });
  const record = createNaturalBatcher<InputResponsesWrite, InputAnswerOutcome>({
    maxBatchSize,
    run: async (writes) => {
      const outcomes: BatchOutcome<InputAnswerOutcome>[] = [];
      // A statement updates a row once: answers to the same task go in rounds, in arrival
      // order, each after the previous one committed (as two lone calls serialize on the lock).
      for (const entries of rounds(writes)) {
        const answered = await round(entries.map((entry) => entry.write));
        entries.forEach((entry, index) => (outcomes[entry.index] = answered[index]!));
      }
      return outcomes;
    },
  });
  return (owner, taskId, responses) => record({ owner, taskId, responses });
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
