import type { Logger } from './logger.js';
import type { Worker } from './worker.js';

/** How long past the grace the close steps may take before the process gives up on them. */
export const SHUTDOWN_HARD_MARGIN_MS = 10_000;

export interface ShutdownOptions {
  worker: Pick<Worker, 'heldCount' | 'drain' | 'abortRunningSteps' | 'close'>;
  logger: Logger;
  /** SHUTDOWN_GRACE_MS: running steps get this long to reach a checkpoint. */
  graceMs: number;
  exit: (code: number) => void;
  /** Defaults to SHUTDOWN_HARD_MARGIN_MS. */
  hardMarginMs?: number;
}

/**
 * The way out, in order: take no more work (running tasks stop at their next checkpoint and give
 * their lease back) → after the grace, stop the steps still running → once every handler is done,
 * close the connections → exit 0. A hard deadline of grace + 10 s exits 1 if any step hangs.
 */
export function createShutdown(options: ShutdownOptions): (signal: string) => Promise<void> {
  const { worker, logger, graceMs } = options;
  let started = false;
  return async (signal) => {
    if (started) return;
    started = true;
    logger.info({ signal, held: worker.heldCount(), graceMs }, 'shutting down');
    worker.drain();
    const graceTimer = setTimeout(() => worker.abortRunningSteps(), graceMs);
    const hardExit = setTimeout(
      () => {
        logger.error('shutdown did not finish in time; exiting');
        options.exit(1);
      },
      graceMs + (options.hardMarginMs ?? SHUTDOWN_HARD_MARGIN_MS),
    );
    hardExit.unref();
    try {
      await worker.close();
      clearTimeout(graceTimer);
      clearTimeout(hardExit);
      logger.info('stopped');
      options.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      options.exit(1);
    }
  };
}
