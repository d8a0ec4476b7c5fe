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

/** Marks every ProtocolError, whichever copy of this package created it. */
const PROTOCOL_ERROR_BRAND = Symbol.for('@mcp-tasks/protocol.ProtocolError');

/**
 * The only error that is ever serialized to a client. Everything else thrown inside the server is
 * internal: it is logged and answered as -32603 without its message.
 */
export class ProtocolError extends Error {
  readonly [PROTOCOL_ERROR_BRAND] = true;

  /**
   * A tool module loaded at run time (MCP_TOOL_MODULES) may carry its own copy of this package;
   * its ProtocolErrors must still fail a task with their code instead of counting as unexpected.
   * Subclasses keep the ordinary prototype check.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== ProtocolError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[PROTOCOL_ERROR_BRAND] === true
    );
  }

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
