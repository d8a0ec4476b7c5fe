import { ErrorCode } from '@mcp-tasks/protocol';
import { HttpProtocolError } from '../errors.js';

/**
 * The MCP_REQUEST_TIMEOUT_MS budget of one request. Its signal aborts when the client goes away
 * or the budget runs out, so timed-out work (a sync tool's sleep) stops instead of running on
 * unseen. `disarm()` marks the point after which the work must finish: once a create is taken
 * into an INSERT the client has to get its handle, so the timeout no longer cuts the reply
 * (creation is bounded on its own: the replica wait by MCP_VISIBILITY_TIMEOUT_MS, the enqueue by
 * the queue's command timeout). A task cut off mid-creation would run with nobody holding its id.
 * Until then (a create or a poll waiting for its batch) the timeout stands, and `check()` lets the
 * batcher drop, unsent, the work of a request that already got its 504 or whose client left.
 */
export interface RequestDeadline {
  readonly signal: AbortSignal;
  /** Disarms the timeout; throws the abort reason when the request already timed out or the client left. */
  disarm(): void;
  /** Throws the abort reason when the request timed out or the client left; changes nothing. */
  check(): void;
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
  return new TimedRequestDeadline(clientSignal, timeoutMs);
}

/**
 * A class, not an object literal with `get signal()`: V8 gives each such literal a hidden class
 * of its own in the old generation, holding the getter, and that keeps everything the getter's
 * closure reaches (the whole request) alive through every young-generation collection until the
 * next full one: made per request, it would promote every request's objects.
 */
class TimedRequestDeadline implements RequestDeadline {
  #expired: HttpProtocolError | undefined;
  #expiry: AbortController | undefined;
  #signal: AbortSignal | undefined;
  #rejectRun: ((error: unknown) => void) | undefined;
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly clientSignal: () => AbortSignal,
    private readonly timeoutMs: number | undefined,
  ) {
    this.#timer =
      timeoutMs === undefined ? undefined : setTimeout(() => this.#expire(timeoutMs), timeoutMs);
  }

  #expire(timeoutMs: number): void {
    // Nothing a client could not repeat happened (a create disarms the deadline before it
    // commits), so it may come back, as from any 5xx of this server.
    const expired = new HttpProtocolError(504, {
      code: ErrorCode.InternalError,
      message: `Request timed out after ${timeoutMs} ms`,
      headers: { 'Retry-After': '1' },
    });
    this.#expired = expired;
    this.#expiry?.abort(expired);
    this.#rejectRun?.(expired);
  }

  get signal(): AbortSignal {
    if (this.#signal !== undefined) return this.#signal;
    if (this.timeoutMs === undefined) return (this.#signal = this.clientSignal());
    const expiry = new AbortController();
    this.#expiry = expiry;
    if (this.#expired !== undefined) expiry.abort(this.#expired);
    return (this.#signal = AbortSignal.any([this.clientSignal(), expiry.signal]));
  }

  disarm(): void {
    this.check();
    clearTimeout(this.#timer);
  }

  check(): void {
    // Without building the combined signal when no handler did (AbortSignal.any is the costly
    // part): the request is over if the budget ran out or the client left.
    if (this.#signal !== undefined) this.#signal.throwIfAborted();
    else if (this.#expired !== undefined) throw this.#expired;
    else this.clientSignal().throwIfAborted();
  }

  run<T>(work: Promise<T>): Promise<T> {
    const timer = this.#timer;
    if (timer === undefined) return work;
    if (this.#expired !== undefined) return Promise.reject(this.#expired);
    return new Promise<T>((resolve, reject) => {
      this.#rejectRun = reject;
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
  }
}
