import { ErrorCode } from '@mcp-tasks/protocol';
import type { TaskOwner } from '@mcp-tasks/tasks';
import { HttpProtocolError } from '../errors.js';

/** Who is calling: every task is owned by, and only visible to, this pair (R12, R15). */
export type Identity = TaskOwner;

export interface Authenticator {
  /** Resolves the caller from the Authorization header, or throws a 401 HttpProtocolError. */
  authenticate(authorization: string | null): Promise<Identity>;
}

/**
 * RFC 6750 §3: no credentials gets a bare challenge; bad credentials say `invalid_token`.
 * The reason is not echoed in detail so a probe learns nothing about which check failed.
 */
export function unauthorized(kind: 'missing' | 'invalid'): HttpProtocolError {
  const challenge =
    kind === 'missing' ? 'Bearer realm="mcp"' : 'Bearer realm="mcp", error="invalid_token"';
  return new HttpProtocolError(
    401,
    ErrorCode.InvalidRequest,
    kind === 'missing'
      ? 'Unauthorized: send Authorization: Bearer <token>'
      : 'Unauthorized: invalid bearer token',
    undefined,
    { 'WWW-Authenticate': challenge },
  );
}

/** The token of `Authorization: Bearer <token>`, or undefined when absent or another scheme. */
export function bearerToken(authorization: string | null): string | undefined {
  if (authorization === null) return undefined;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(authorization);
  return match?.[1];
}
