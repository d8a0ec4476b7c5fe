import { SingleBar } from 'cli-progress';

export interface ProgressCounts {
  /** Tasks acknowledged by a create so far. */
  created: number;
  /** Tasks seen terminal so far. */
  finished: number;
  /** Replies that were errors so far. */
  errors: number;
  /** Chaos events so far. */
  chaos: number;
}

export interface RunProgress {
  update(counts: ProgressCounts): void;
  stop(): void;
}

/**
 * The live progress bar the load generator drives: finished tasks out of the planned total, with
 * the other counts beside it. On a non-TTY (CI logs) it prints a line every few seconds instead.
 */
export function createRunProgress(options: {
  total: number;
  stream?: NodeJS.WritableStream;
  /** Non-TTY print interval. */
  logEveryMs?: number;
}): RunProgress {
  const bar = new SingleBar({
    format:
      'tasks {bar} {value}/{total} finished | created {created} | errors {errors} | chaos {chaos} | {duration_formatted}',
    stream: options.stream ?? process.stderr,
    noTTYOutput: true,
    notTTYSchedule: options.logEveryMs ?? 5_000,
    hideCursor: true,
    barsize: 30,
  });
  bar.start(options.total, 0, { created: 0, errors: 0, chaos: 0 });
  return {
    update: (c) => bar.update(c.finished, { created: c.created, errors: c.errors, chaos: c.chaos }),
    stop: () => bar.stop(),
  };
}
