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
