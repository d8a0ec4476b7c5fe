import { ErrorCode } from '@mcp-tasks/protocol';
import { HttpProtocolError } from '../errors.js';

/**
 * The MCP_REQUEST_TIMEOUT_MS budget of one request. Its signal aborts when the client goes away
 * or the budget runs out, so timed-out work (a sync tool's sleep) stops instead of running on
 * unseen. `commit()` marks the point after which the work must finish: once a task is being
 * created the client has to get its handle, so the timeout no longer cuts the reply (creation is
 * bounded on its own: the replica wait by MCP_VISIBILITY_TIMEOUT_MS, the enqueue by the queue's
 * command timeout). A task cut off mid-creation would run with nobody holding its id.
 */
export interface RequestDeadline {
  readonly signal: AbortSignal;
  /** Disarms the timeout; throws the abort reason when the request already timed out or the client left. */
  commit(): void;
  /** Settles with `work`, or rejects with 504 when the budget runs out before `commit()`. */
  run<T>(work: Promise<T>): Promise<T>;
}

export function createRequestDeadline(
  clientSignal: AbortSignal,
  timeoutMs: number | undefined,
): RequestDeadline {
  const expiry = new AbortController();
  const signal = AbortSignal.any([clientSignal, expiry.signal]);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    if (timeoutMs === undefined) return;
    timer = setTimeout(() => {
      const error = new HttpProtocolError(
        504,
        ErrorCode.InternalError,
        `Request timed out after ${timeoutMs} ms`,
      );
      expiry.abort(error);
      reject(error);
    }, timeoutMs);
  });
  // The race below is the only listener; without it an unobserved expiry would be unhandled.
  expired.catch(() => undefined);
  return {
    signal,
    commit() {
      signal.throwIfAborted();
      clearTimeout(timer);
    },
    run(work) {
      if (timeoutMs === undefined) return work;
      return Promise.race([work, expired]).finally(() => clearTimeout(timer));
    },
  };
}
