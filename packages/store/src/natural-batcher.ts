/** What one item of a batch came to: its own value or its own error. */
export type BatchOutcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

export interface NaturalBatcherOptions<I, O> {
  /**
   * Handles one batch and resolves with one outcome per item, in order. A rejection fails every
   * item of that batch (and only that batch).
   */
  run: (items: readonly I[]) => Promise<readonly BatchOutcome<O>[]>;
  /** Items per batch at most; the rest wait for the next one. */
  maxBatchSize: number;
}

/**
 * Natural batching (graphile-worker's localQueue, Hatchet v1's buffers, without their timers): an
 * item that arrives while nothing is in flight is sent at once (a microtask later, so calls of the
 * same turn go together), and items that arrive while a batch is in flight wait for it and go
 * together in the next one. A lone item never waits for a window; under load the batches grow by
 * themselves to what arrived during one round trip. One batch in flight at a time.
 */
export function createNaturalBatcher<I, O>(
  options: NaturalBatcherOptions<I, O>,
): (item: I) => Promise<O> {
  const { run, maxBatchSize } = options;
  if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1) {
    throw new RangeError(`maxBatchSize must be a positive integer, got ${maxBatchSize}`);
  }
  interface Waiting {
    item: I;
    resolve(value: O): void;
    reject(error: unknown): void;
  }
  const waiting: Waiting[] = [];
  let busy = false;

  const settle = (batch: readonly Waiting[], outcomes: readonly BatchOutcome<O>[]): void => {
    batch.forEach((entry, index) => {
      const outcome = outcomes[index];
      if (outcome === undefined) {
        entry.reject(
          new Error(`batch handler returned ${outcomes.length} outcomes for ${batch.length} items`),
        );
      } else if (outcome.ok) entry.resolve(outcome.value);
      else entry.reject(outcome.error);
    });
  };

  const flush = async (): Promise<void> => {
    while (waiting.length > 0) {
      const batch = waiting.splice(0, maxBatchSize);
      try {
        settle(batch, await run(batch.map((entry) => entry.item)));
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    busy = false;
  };

  return (item) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (busy) return;
      busy = true;
      queueMicrotask(() => void flush());
    });
}

/**
 * A batch handler from a single-row statement and a shared one: a lone item takes its single
 * statement; several take the shared one, and if the database refuses that (a check constraint,
 * a lost deadlock) each goes again on its own, so every caller gets its own answer or error.
 */
export function singleOrShared<I, O>(statements: {
  single: (item: I) => Promise<O>;
  shared: (items: readonly I[]) => Promise<BatchOutcome<O>[]>;
}): (items: readonly I[]) => Promise<readonly BatchOutcome<O>[]> {
  const eachAlone = (items: readonly I[]) =>
    Promise.all(items.map((item) => settled(statements.single(item))));
  return async (items) => {
    if (items.length === 1) return await eachAlone(items);
    return await statements.shared(items).catch(() => eachAlone(items));
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
