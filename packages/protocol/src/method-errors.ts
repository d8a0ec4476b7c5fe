import { REMOVED_METHODS } from './constants.js';
import { ErrorCode, ProtocolError } from './errors.js';

/** R5: -32601 for removed and unknown methods alike; the message says which it is. */
export function methodNotFoundError(method: string): ProtocolError {
  return new ProtocolError(
    ErrorCode.MethodNotFound,
    REMOVED_METHODS.includes(method)
      ? `Method not found: ${method} was removed in MCP 2026-07-28 / the Tasks extension (there is no session handshake; poll tasks with tasks/get)`
      : `Method not found: ${method}`,
  );
}
