import { ErrorCode } from '@mcp-tasks/protocol';
import { HttpProtocolError } from '../errors.js';

/**
 * The MCP_REQUEST_TIMEOUT_MS budget of one request. Its signal aborts when the client goes away
 * or the budget runs out, so timed-out work (a sync tool's sleep) stops instead of running on
 * unseen. `disarm()` marks the point after which the work must finish: once a task is being
 * created the client has to get its handle, so the timeout no longer cuts the reply (creation is
 * bounded on its own: the replica wait by MCP_VISIBILITY_TIMEOUT_MS, the enqueue by the queue's
 * command timeout). A task cut off mid-creation would run with nobody holding its id.
 */
export interface RequestDeadline {
  readonly signal: AbortSignal;
  /** Disarms the timeout; throws the abort reason when the request already timed out or the client left. */
  disarm(): void;
  /** Settles with `work`, or rejects with 504 when the budget runs out before `disarm()`. */
  run<T>(work: Promise<T>): Promise<T>;
}

/**
 * One timer per request and nothing else up front: the signal (an AbortController and
 * AbortSignal.any, the costliest part) is only built when a handler reads it, which a poll never
 * does. A signal first read after the budget ran out is born aborted, so nobody can tell the
 * difference. `clientSignal` is a getter for the same reason: on @hono/node-server reading
 * `request.signal` allocates an AbortController.
 */
export function createRequestDeadline(
  clientSignal: () => AbortSignal,
  timeoutMs: number | undefined,
): RequestDeadline {
  let expired: HttpProtocolError | undefined;
  let expiry: AbortController | undefined;
  let signal: AbortSignal | undefined;
  let rejectRun: ((error: unknown) => void) | undefined;
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          expired = new HttpProtocolError(
            504,
            ErrorCode.InternalError,
            `Request timed out after ${timeoutMs} ms`,
          );
          expiry?.abort(expired);
          rejectRun?.(expired);
        }, timeoutMs);
  const getSignal = (): AbortSignal => {
    if (signal !== undefined) return signal;
    if (timeoutMs === undefined) return (signal = clientSignal());
    expiry = new AbortController();
    if (expired !== undefined) expiry.abort(expired);
    return (signal = AbortSignal.any([clientSignal(), expiry.signal]));
  };
  return {
    get signal() {
      return getSignal();
    },
    disarm() {
      // Without building the combined signal when no handler did (AbortSignal.any is the costly
      // part): the request is over if the budget ran out or the client left.
      if (signal !== undefined) signal.throwIfAborted();
      else if (expired !== undefined) throw expired;
      else clientSignal().throwIfAborted();
      clearTimeout(timer);
    },
    run<T>(work: Promise<T>): Promise<T> {
      if (timer === undefined) return work;
      if (expired !== undefined) return Promise.reject(expired);
      return new Promise<T>((resolve, reject) => {
        rejectRun = reject;
        // Two reactions, not finally().then(): a poll pays for every promise made here.
        work.then(
          (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          (error: unknown) => {
            clearTimeout(timer);
            // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the work's own rejection, passed on unchanged
            reject(error);
          },
        );
      });
    },
  };
}
