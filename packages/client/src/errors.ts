/**
 * Two families, as in the server: `McpError` is what the server said (a JSON-RPC error, with the
 * HTTP status it came with); `ConnectionError` and `HttpError` are what got in the way.
 */

/** A JSON-RPC error answered by the server. */
export class McpError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
    /** The HTTP status of the reply that carried it (200 for a JSON-RPC error on a 200). */
    readonly httpStatus: number,
    /** From `Retry-After` (429/503), in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'McpError';
  }
}

/** A reply that is not JSON-RPC at all: a proxy's 502 page, a 404 from the wrong URL. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly retryAfterMs?: number,
  ) {
    super(`HTTP ${status}${body === '' ? '' : `: ${body.slice(0, 200)}`}`);
    this.name = 'HttpError';
  }
}

/** The request never got an answer: refused, reset, DNS, a stream cut mid-way. */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConnectionError';
  }
}

/** A `tools/call` needed input but the caller gave no `onInput`. */
export class InputRequiredError extends Error {
  constructor(
    readonly inputRequests: Record<string, unknown>,
    readonly taskId?: string,
  ) {
    super(
      `${taskId === undefined ? 'The call' : `Task ${taskId}`} needs input: ${Object.keys(inputRequests).join(', ')}`,
    );
    this.name = 'InputRequiredError';
  }
}

const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

/** Worth sending again unchanged: the network, an overloaded or restarting server, a rate limit. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof ConnectionError) return true;
  if (error instanceof HttpError) return RETRYABLE_STATUS.has(error.status);
  if (error instanceof McpError) return RETRYABLE_STATUS.has(error.httpStatus);
  return false;
}

/** The server's own hint for when to come back, when it gave one. */
export function retryAfterOf(error: unknown): number | undefined {
  if (error instanceof McpError || error instanceof HttpError) return error.retryAfterMs;
  return undefined;
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from now. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
