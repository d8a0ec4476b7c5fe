import type { Logger } from 'pino';

/**
 * A pino child made on first use. A child serializes its bindings when it is made, and most
 * requests log nothing at the configured level (a poll at LOG_LEVEL=warn), so making one per
 * request up front was pure cost. Every call after the first returns the same child.
 */
export function lazyChildLogger(parent: Logger, bindings: Record<string, unknown>): () => Logger {
  let child: Logger | undefined;
  return () => (child ??= parent.child(bindings));
}
