/** JSON-RPC and MCP-reserved error codes this server sends (BASIC §Error Codes). */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** A JSON-RPC error object as it goes on the wire. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * The only error that is ever serialized to a client. Everything else thrown inside the server is
 * internal: it is logged and answered as -32603 without its message.
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }

  toJsonRpcError(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
