import { performance } from 'node:perf_hooks';

export interface BatchLoopResult {
  /** Rows handled over all batches. */
  total: number;
  batches: number;
  /** The time budget ran out while batches were still coming back full: work is left over. */
  outOfTime: boolean;
  /**
   * The batch that threw and ended the loop. The batches before it committed, and their rows are
   * in `total`: a step that fails halfway still reports what it did.
   */
  failure?: { error: unknown };
}

/**
 * Runs one bounded batch after another while they come back full, until the time budget (on the
 * monotonic clock) is spent or `shouldStop` says so. At least one batch always runs, so a budget
 * smaller than one batch still makes progress. A batch that throws ends the loop: its error comes
 * back as `failure`, beside the rows the batches before it handled.
 */
export async function runInBatches(options: {
  batchSize: number;
  budgetMs: number;
  runBatch(limit: number): Promise<number>;
  shouldStop?: () => boolean;
}): Promise<BatchLoopResult> {
  const started = performance.now();
  let total = 0;
  let batches = 0;
  for (;;) {
    let handled: number;
    try {
      handled = await options.runBatch(options.batchSize);
    } catch (error) {
      return { total, batches, outOfTime: false, failure: { error } };
    }
    total += handled;
    batches += 1;
    if (handled < options.batchSize) return { total, batches, outOfTime: false };
    if (options.shouldStop?.() === true) return { total, batches, outOfTime: false };
    if (performance.now() - started >= options.budgetMs) return { total, batches, outOfTime: true };
  }
}
