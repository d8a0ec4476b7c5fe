import { ErrorCode, ProtocolError, httpStatusForErrorCode } from '@mcp-tasks/protocol';

/**
 * A ProtocolError that also fixes the HTTP status (and headers) of its reply, for the failures
 * that happen at the HTTP layer: 401, 403, 405, 406, 413, 415, 429, 503, 504. It is still the one
 * error family serialized to clients.
 */
export class HttpProtocolError extends ProtocolError {
  constructor(
    readonly status: number,
    code: number,
    message: string,
    data?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(code, message, data);
    this.name = 'HttpProtocolError';
  }
}

/**
 * Stable reasons a request is refused for now, sent as `error.data.reason` so a client can branch
 * on them; the message says the same in words a person can act on. Every such answer carries
 * `Retry-After` and `data.retryAfterMs`, and has changed nothing (or, where a commit's fate was
 * unknown, withdrawn what it made): retrying is always safe.
 */
export type RetryReason =
  | 'overloaded'
  | 'tenant_rate_limited'
  | 'tenant_in_flight_limit'
  | 'store_unavailable'
  | 'queue_unavailable'
  | 'replica_lag'
  | 'shutting_down'
  | 'listen_capacity'
  | 'identity_provider_unavailable';

export interface RetryLaterOptions {
  reason: RetryReason;
  message: string;
  retryAfterMs: number;
  /** 503 (the server cannot take it now) unless the caller is over its own limit: 429. */
  status?: 429 | 503;
  /** More stable fields for the client (a limit's name and value, say). */
  data?: Record<string, unknown>;
}

/**
 * The one shape of "not now, retry": HTTP 429/503 with `Retry-After` (whole seconds, at least 1),
 * JSON-RPC -32603 for 503 (the server's side) and -32600 for 429 (the caller's side), and
 * `data: { reason, retryAfterMs, ... }`. Never "Internal error": that stays for bugs.
 */
export function retryLater(options: RetryLaterOptions): HttpProtocolError {
  const status = options.status ?? 503;
  const code = status === 429 ? ErrorCode.InvalidRequest : ErrorCode.InternalError;
  const retryAfterMs = Math.max(0, Math.round(options.retryAfterMs));
  return new HttpProtocolError(
    status,
    code,
    options.message,
    { reason: options.reason, retryAfterMs, ...options.data },
    { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
  );
}

export interface MappedError {
  status: number;
  headers: Record<string, string>;
  error: ProtocolError;
  /** True when the error was not a ProtocolError: the caller logs it in full. */
  unexpected: boolean;
}

/**
 * The single mapping from anything thrown to what the client sees. A non-ProtocolError never
 * leaks its message: it becomes -32603 and the caller logs the original.
 */
export function mapError(error: unknown): MappedError {
  if (error instanceof HttpProtocolError) {
    return { status: error.status, headers: error.headers, error, unexpected: false };
  }
  if (error instanceof ProtocolError) {
    return { status: httpStatusForErrorCode(error.code), headers: {}, error, unexpected: false };
  }
  return {
    status: 500,
    headers: {},
    error: new ProtocolError(ErrorCode.InternalError, 'Internal error'),
    unexpected: true,
  };
}
