/** What one item of a batch came to: its own value or its own error. */
export type BatchOutcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

/** Which bound refused an item: too many waiting already, or this one waited too long. */
export type WaitBound = 'length' | 'age';

export interface NaturalBatcherOptions<I, O> {
  /**
   * Handles one batch and resolves with one outcome per item, in order. A rejection fails every
   * item of that batch (and only that batch).
   */
  run: (items: readonly I[]) => Promise<readonly BatchOutcome<O>[]>;
  /** Items per batch at most; the rest wait for the next one. */
  maxBatchSize: number;
  /** Items waiting for a batch at most; one more is refused at once (`overloaded('length')`). */
  maxWaiting?: number;
  /** How long an item may wait for its batch; then it is refused unsent (`overloaded('age')`). */
  maxWaitMs?: number;
  /** The error an item refused by a bound rejects with; default a plain Error. */
  overloaded?: (bound: WaitBound, limit: number) => Error;
  /**
   * How long the first item to arrive while nothing is in flight waits for others before its
   * batch goes (a full batch goes at once); default 0: only until the event loop's round ends.
   */
  lingerMs?: number;
}

export interface AddOptions {
  /**
   * Called as the item is taken into a batch, just before the batch is sent. If it throws (the
   * caller went away), the item is dropped unsent and rejects with that error.
   */
  onTaken?: () => void;
}

/** An item waiting for its batch, with its caller's promise. */
interface WaitingItem<I, O> {
  item: I;
  since: number;
  onTaken: (() => void) | undefined;
  resolve(value: O): void;
  reject(error: unknown): void;
}

/** NaturalBatcherOptions.overloaded's default. */
const defaultOverloaded = (bound: WaitBound, limit: number): Error =>
  new Error(
    bound === 'length' ? `${limit} items are waiting already` : `waited ${limit} ms unsent`,
  );

/** Throws a RangeError for a bound that is set but not a positive integer. */
function checkBounds(bounds: Record<string, number | undefined>): void {
  for (const [name, value] of Object.entries(bounds)) {
    if (value === undefined || value === Infinity) continue;
    if (!Number.isInteger(value) || value < 1) {
      throw new RangeError(`${name} must be a positive integer, got ${value}`);
    }
  }
}

/** Settles each item of a batch with its own outcome; one missing outcome rejects its item. */
function settleBatch<I, O>(
  batch: readonly WaitingItem<I, O>[],
  outcomes: readonly BatchOutcome<O>[],
): void {
  batch.forEach((entry, index) => {
    const outcome = outcomes[index];
    if (outcome === undefined) {
      entry.reject(
        new Error(`batch handler returned ${outcomes.length} outcomes for ${batch.length} items`),
      );
    } else if (outcome.ok) entry.resolve(outcome.value);
    else entry.reject(outcome.error);
  });
}

/**
 * Natural batching (graphile-worker's localQueue, Hatchet v1's buffers, without their timers): an
 * item that arrives while nothing is in flight is sent at once (once the event loop has run this
 * round's I/O callbacks, so the calls of one turn, and of the other connections read in the same
 * round, go together), and items that arrive while a batch is in flight wait for it and go
 * together in the next one. A lone item never waits for a window; under load the batches grow by
 * themselves to what arrived during one round trip. One batch in flight at a time.
 *
 * When the handler stalls (a database brownout), waiting items are bounded twice: by count and by
 * age, so a stall turns into quick refusals the caller can retry instead of a queue of work whose
 * callers have given up; and an item whose caller left (`onTaken` throws) is never sent.
 */
export function createNaturalBatcher<I, O>(
  options: NaturalBatcherOptions<I, O>,
): (item: I, addOptions?: AddOptions) => Promise<O> {
  const { run, maxBatchSize } = options;
  const maxWaiting = options.maxWaiting ?? Infinity;
  const maxWaitMs = options.maxWaitMs;
  const overloaded = options.overloaded ?? defaultOverloaded;
  const lingerMs = options.lingerMs ?? 0;
  checkBounds({ maxBatchSize, maxWaiting, maxWaitMs });
  if (!Number.isInteger(lingerMs) || lingerMs < 0) {
    throw new RangeError(`lingerMs must be a whole number of ms, 0 or more, got ${lingerMs}`);
  }
  // A lingering item is not yet under the age bound's timer: the linger must end first.
  if (maxWaitMs !== undefined && lingerMs >= maxWaitMs) {
    throw new RangeError(`lingerMs (${lingerMs}) must be shorter than maxWaitMs (${maxWaitMs})`);
  }
  type Waiting = WaitingItem<I, O>;
  let waiting: Waiting[] = [];
  let busy = false;
  let ageTimer: NodeJS.Timeout | undefined;
  let lingerTimer: NodeJS.Timeout | undefined;

  /** Refuses the items that waited past maxWaitMs (the oldest are first), then re-arms. */
  const expireOld = (): void => {
    ageTimer = undefined;
    if (maxWaitMs === undefined) return;
    const oldestAllowed = Date.now() - maxWaitMs;
    let expired = 0;
    while (expired < waiting.length && waiting[expired]!.since <= oldestAllowed) expired += 1;
    if (expired > 0) {
      for (const entry of waiting.splice(0, expired)) entry.reject(overloaded('age', maxWaitMs));
    }
    armAgeTimer();
  };
  const armAgeTimer = (): void => {
    const oldest = waiting[0];
    if (maxWaitMs === undefined || ageTimer !== undefined || oldest === undefined) return;
    ageTimer = setTimeout(expireOld, Math.max(0, oldest.since + maxWaitMs - Date.now()));
    ageTimer.unref();
  };

  /** The next batch: up to maxBatchSize items whose callers are still there. */
  const takeBatch = (): Waiting[] => {
    const batch: Waiting[] = [];
    let taken = 0;
    while (taken < waiting.length && batch.length < maxBatchSize) {
      const entry = waiting[taken]!;
      taken += 1;
      try {
        entry.onTaken?.();
        batch.push(entry);
      } catch (error) {
        entry.reject(error);
      }
    }
    waiting = taken === waiting.length ? [] : waiting.slice(taken);
    return batch;
  };

  const flush = async (): Promise<void> => {
    while (waiting.length > 0) {
      const batch = takeBatch();
      if (batch.length === 0) continue;
      try {
        settleBatch(batch, await run(batch.map((entry) => entry.item)));
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    busy = false;
  };

  return (item, addOptions) =>
    new Promise<O>((resolve, reject) => {
      if (waiting.length >= maxWaiting) {
        reject(overloaded('length', maxWaiting));
        return;
      }
      waiting.push({ item, since: Date.now(), onTaken: addOptions?.onTaken, resolve, reject });
      if (lingerTimer !== undefined) {
        if (waiting.length < maxBatchSize) return;
        clearTimeout(lingerTimer);
        lingerTimer = undefined;
        void flush();
        return;
      }
      if (busy) {
        armAgeTimer();
        return;
      }
      busy = true;
      if (lingerMs > 0) {
        lingerTimer = setTimeout(() => {
          lingerTimer = undefined;
          void flush();
        }, lingerMs);
        return;
      }
      // After this round's I/O callbacks, not a microtask later: requests read from several
      // connections in one round each reach here in their own callback, and go together.
      setImmediate(() => void flush());
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
