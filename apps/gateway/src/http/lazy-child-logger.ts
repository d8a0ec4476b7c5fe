import type { Level, Logger } from 'pino';

/** A request's logger, made on first call; asking whether a level is on makes nothing. */
export interface LazyLogger {
  (): Logger;
  /** Whether a line at `level` would be written (the child's level is its parent's). */
  isLevelEnabled(level: Level): boolean;
}

/**
 * A pino child made on first use. A child serializes its bindings when it is made, and most
 * requests log nothing at the configured level (a poll at LOG_LEVEL=warn), so making one per
 * request up front was pure cost. Every call after the first returns the same child.
 */
export function lazyChildLogger(parent: Logger, bindings: Record<string, unknown>): LazyLogger {
  let child: Logger | undefined;
  return Object.assign(() => (child ??= parent.child(bindings)), {
    isLevelEnabled: (level: Level) => parent.isLevelEnabled(level),
  });
}
