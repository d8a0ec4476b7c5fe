import { ErrorCode } from './errors.js';

/** R24: the HTTP status a JSON-RPC error answer travels with on Streamable HTTP. */
export function httpStatusForErrorCode(code: number): number {
  switch (code) {
    case ErrorCode.MethodNotFound:
      return 404;
    case ErrorCode.InternalError:
      return 500;
    case ErrorCode.ParseError:
    case ErrorCode.InvalidRequest:
    case ErrorCode.InvalidParams:
    case ErrorCode.HeaderMismatch:
    case ErrorCode.MissingRequiredClientCapability:
    case ErrorCode.UnsupportedProtocolVersion:
      return 400;
    default:
      return 400;
  }
}
