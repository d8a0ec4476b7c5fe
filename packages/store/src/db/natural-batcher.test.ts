import { afterEach, describe, expect, it, vi } from 'vitest';
import { createNaturalBatcher, type BatchOutcome } from './natural-batcher.js';

/** A batch handler whose batches finish when the test says so. */
function controlledRun() {
  const batches: number[][] = [];
  const finishers: (() => void)[] = [];
  const run = (items: readonly number[]): Promise<BatchOutcome<number>[]> => {
    batches.push([...items]);
    return new Promise((resolve) => {
      finishers.push(() =>
        resolve(
          items.map((n) =>
            n < 0 ? { ok: false, error: new Error(`refused ${n}`) } : { ok: true, value: n * 10 },
          ),
        ),
      );
    });
  };
  return { batches, finishers, run };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('createNaturalBatcher', () => {
  it('sends a lone item at once, with no window to wait for', async () => {
    const { batches, finishers, run } = controlledRun();
    const add = createNaturalBatcher({ run, maxBatchSize: 10 });
    const result = add(1);
    // Sent once the event loop has run the I/O callbacks of this round: here, none.
    await new Promise(setImmediate);
    expect(batches).toEqual([[1]]);
    finishers[0]!();
    await expect(result).resolves.toBe(10);
  });

  it('sends together the items that callbacks of one round of the event loop add, each turn apart', async () => {
    const { batches, run } = controlledRun();
    const add = createNaturalBatcher({ run, maxBatchSize: 10 });
    // Two callbacks of one round, as two requests read from two connections are: microtasks run
    // between them, so a flush a microtask after the first add would have sent it alone.
    await new Promise<void>((resolve) => {
      setImmediate(() => void add(1));
      setImmediate(() => {
        void add(2);
        resolve();
      });
    });
    await new Promise(setImmediate);
    expect(batches).toEqual([[1, 2]]);
  });

  it('sends the items that arrive while a batch is in flight together, in the next batch', async () => {
    const { batches, finishers, run } = controlledRun();
    const add = createNaturalBatcher({ run, maxBatchSize: 10 });
    const first = add(1);
    await turn();
    const later = [add(2), add(3), add(4)];
    await turn();
    expect(batches).toEqual([[1]]);
    finishers[0]!();
    await turn();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    finishers[1]!();
    expect(await Promise.all([first, ...later])).toEqual([10, 20, 30, 40]);
  });

  it('caps a batch at maxBatchSize and sends the rest next', async () => {
    const { batches, finishers, run } = controlledRun();
    const add = createNaturalBatcher({ run, maxBatchSize: 2 });
    const results = [add(1), add(2), add(3)];
    await turn();
    expect(batches).toEqual([[1, 2]]);
    finishers[0]!();
    await turn();
    expect(batches).toEqual([[1, 2], [3]]);
    finishers[1]!();
    expect(await Promise.all(results)).toEqual([10, 20, 30]);
  });

  it("fails only the item whose outcome is an error, and a thrown batch only that batch's items", async () => {
    let calls = 0;
    const add = createNaturalBatcher<number, number>({
      maxBatchSize: 10,
      run: (items) => {
        calls += 1;
        if (calls === 1) return Promise.reject(new Error('connection lost'));
        return Promise.resolve(
          items.map((n) =>
            n < 0 ? { ok: false, error: new Error(`refused ${n}`) } : { ok: true, value: n },
          ),
        );
      },
    });
    await expect(add(1)).rejects.toThrow('connection lost');
    const outcomes = await Promise.allSettled([add(2), add(-3), add(4)]);
    expect(
      outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message)),
    ).toEqual([2, 'refused -3', 4]);
  });

  it('refuses at once an item beyond maxWaiting, and unsent an item that waited past maxWaitMs', async () => {
    const { batches, finishers, run } = controlledRun();
    const add = createNaturalBatcher({
      run,
      maxBatchSize: 10,
      maxWaiting: 2,
      maxWaitMs: 50,
      overloaded: (bound, limit) => new Error(`${bound} ${limit}`),
    });
    const inFlight = add(1);
    await turn();
    const waiting = [add(2), add(3)].map((p) => p.catch((error: Error) => error.message));
    await expect(add(4)).rejects.toThrow('length 2');
    expect(await Promise.all(waiting)).toEqual(['age 50', 'age 50']);
    finishers[0]!();
    await expect(inFlight).resolves.toBe(10);
    await turn();
    expect(batches).toEqual([[1]]);
  });

  it('drops unsent an item whose onTaken throws (its caller left), with that error', async () => {
    const { batches, finishers, run } = controlledRun();
    const add = createNaturalBatcher({ run, maxBatchSize: 10 });
    const first = add(1);
    await turn();
    const taken: number[] = [];
    const gone = add(2, {
      onTaken: () => {
        throw new Error('client left');
      },
    });
    const kept = add(3, { onTaken: () => taken.push(3) });
    finishers[0]!();
    await expect(gone).rejects.toThrow('client left');
    await turn();
    expect(batches).toEqual([[1], [3]]);
    expect(taken).toEqual([3]);
    finishers[1]!();
    expect(await Promise.all([first, kept])).toEqual([10, 30]);
  });

  it('refuses a batch size that is not a positive integer, and a linger that is negative or outlasts the age bound', () => {
    const run = () => Promise.resolve([]);
    expect(() => createNaturalBatcher({ run, maxBatchSize: 0 })).toThrow(
      'maxBatchSize must be a positive integer, got 0',
    );
    expect(() => createNaturalBatcher({ run, maxBatchSize: 1, lingerMs: -1 })).toThrow(
      'lingerMs must be a whole number of ms, 0 or more, got -1',
    );
    expect(() =>
      createNaturalBatcher({ run, maxBatchSize: 1, lingerMs: 50, maxWaitMs: 50 }),
    ).toThrow('lingerMs (50) must be shorter than maxWaitMs (50)');
  });
});

describe('createNaturalBatcher with lingerMs', () => {
  afterEach(() => void vi.useRealTimers());
  /** The batcher's timers on a clock the test moves; `after(ms)` runs what falls due. */
  const fakeClock = () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate'] });
    return { after: (ms: number) => vi.advanceTimersByTimeAsync(ms) };
  };

  it('holds the first item of an idle batcher that long for others, then sends them together', async () => {
    const clock = fakeClock();
    const { batches, finishers, run } = controlledRun();
    const add = createNaturalBatcher({ run, maxBatchSize: 10, lingerMs: 5 });
    const first = add(1);
    await clock.after(3);
    const second = add(2);
    await clock.after(1);
    expect(batches).toEqual([]);
    await clock.after(1);
    expect(batches).toEqual([[1, 2]]);
    finishers[0]!();
    expect(await Promise.all([first, second])).toEqual([10, 20]);
  });

  it('sends a batch that fills up at once, without waiting out the linger', async () => {
    const clock = fakeClock();
    const { batches, run } = controlledRun();
    const add = createNaturalBatcher({ run, maxBatchSize: 2, lingerMs: 5 });
    void add(1);
    void add(2);
    await clock.after(0);
    expect(batches).toEqual([[1, 2]]);
  });

  it('sends the items that waited for a batch in flight as soon as it ends, without a second linger', async () => {
    const clock = fakeClock();
    const { batches, finishers, run } = controlledRun();
    const add = createNaturalBatcher({ run, maxBatchSize: 10, lingerMs: 5 });
    void add(1);
    await clock.after(5);
    void add(2);
    void add(3);
    finishers[0]!();
    await clock.after(0);
    expect(batches).toEqual([[1], [2, 3]]);
    finishers[1]!();
    await clock.after(0);
    // Idle again: the next first item lingers once more.
    void add(4);
    await clock.after(4);
    expect(batches).toEqual([[1], [2, 3]]);
    await clock.after(1);
    expect(batches).toEqual([[1], [2, 3], [4]]);
  });
});
