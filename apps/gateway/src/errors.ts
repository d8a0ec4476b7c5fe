import { ErrorCode, ProtocolError, httpStatusForErrorCode } from '@mcp-tasks/protocol';
import { infrastructureFailure, type InfrastructureFailure } from '@mcp-tasks/store';

/** What an HttpProtocolError says besides its status (Hono's HTTPException takes the same shape). */
export interface HttpProtocolErrorOptions {
  /** The JSON-RPC error code. */
  code: number;
  message: string;
  /** The JSON-RPC error's `data`. */
  data?: unknown;
  /** Set on the HTTP reply (WWW-Authenticate, Retry-After, Allow...). */
  headers?: Record<string, string>;
}

/**
 * A ProtocolError that also fixes the HTTP status (and headers) of its reply, for the failures
 * that happen at the HTTP layer: 401, 403, 405, 406, 413, 415, 429, 503, 504. It is still the one
 * error family serialized to clients. `new HttpProtocolError(429, { code, message, headers })`.
 */
export class HttpProtocolError extends ProtocolError {
  readonly headers: Record<string, string>;

  constructor(
    readonly status: number,
    options: HttpProtocolErrorOptions,
  ) {
    super(options.code, options.message, options.data);
    this.name = 'HttpProtocolError';
    this.headers = options.headers ?? {};
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
  return new HttpProtocolError(status, {
    code,
    message: options.message,
    data: { reason: options.reason, retryAfterMs, ...options.data },
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
  });
}

/** How long a client is asked to wait while the task store is unreachable or going away. */
export const STORE_RETRY_AFTER_MS = 1_000;

/** Each store failure in words an operator or a user can act on (the cause is also in data). */
const STORE_FAILURE_WORDS: Readonly<Record<InfrastructureFailure, string>> = {
  unreachable: 'cannot connect to the database',
  connection_lost: 'the database connection was lost',
  shutting_down: 'the database is restarting or shutting down',
  read_only: 'the database is read-only, as during a failover',
  too_many_connections: 'the database has no free connection slots',
  no_free_connection: 'no database connection became free in time',
  timed_out: 'the database did not answer in time',
  out_of_resources: 'the database is out of resources',
  conflict: 'a conflicting database operation',
};

/**
 * The task store (Postgres) cannot serve the request now: 503, Retry-After, `data.reason`
 * `store_unavailable` and, when known, `data.cause` (an InfrastructureFailure). `then` says what
 * to do (a create says whether anything will run: see createFailure).
 */
export function storeUnavailable(
  failure: InfrastructureFailure | undefined,
  then = `retry in ${Math.ceil(STORE_RETRY_AFTER_MS / 1000)} s`,
): HttpProtocolError {
  const cause = failure === undefined ? '' : ` (${STORE_FAILURE_WORDS[failure]})`;
  return retryLater({
    reason: 'store_unavailable',
    message: `task store unavailable${cause}; ${then}`,
    retryAfterMs: STORE_RETRY_AFTER_MS,
    ...(failure === undefined ? {} : { data: { cause: failure } }),
  });
}

export interface MappedError {
  status: number;
  headers: Record<string, string>;
  error: ProtocolError;
  /** True when the error was not a ProtocolError: the caller logs it in full. */
  unexpected: boolean;
  /** True for an infrastructure failure (store unreachable...): logged with its driver error. */
  outage: boolean;
}

/**
 * The single mapping from anything thrown to what the client sees. An infrastructure failure
 * (infrastructureFailure in @mcp-tasks/store: the one table of them) is a 503 to retry; any other
 * non-ProtocolError never leaks its message: it becomes -32603 (500, a bug) and the caller logs
 * the original.
 */
export function mapError(error: unknown): MappedError {
  if (error instanceof HttpProtocolError) {
    return {
      status: error.status,
      headers: error.headers,
      error,
      unexpected: false,
      outage: false,
    };
  }
  if (error instanceof ProtocolError) {
    const status = httpStatusForErrorCode(error.code);
    return { status, headers: {}, error, unexpected: false, outage: false };
  }
  const failure = infrastructureFailure(error);
  if (failure !== undefined) {
    const refusal = storeUnavailable(failure);
    return {
      status: refusal.status,
      headers: refusal.headers,
      error: refusal,
      unexpected: false,
      outage: true,
    };
  }
  return {
    status: 500,
    headers: {},
    error: new ProtocolError(ErrorCode.InternalError, 'Internal error'),
    unexpected: true,
    outage: false,
  };
}
