import { ErrorCode } from '@mcp-tasks/protocol';
import { HttpProtocolError } from '../errors.js';

/** What every challenge tells a client about where and how to get a token. */
export interface ChallengeParams {
  /** The public URL of the Protected Resource Metadata (RFC 9728 §5.1); absent when none is served. */
  resourceMetadataUrl?: string | undefined;
  /** The scopes a token needs, space-separated (RFC 6750 §3); absent when none is required. */
  scope?: string | undefined;
}

export const NO_CHALLENGE_PARAMS: ChallengeParams = {};

type BearerError = 'invalid_token' | 'insufficient_scope';

/** `Bearer realm="mcp"[, error=…][, scope=…][, resource_metadata=…]` (RFC 6750 §3, RFC 9728 §5.1). */
export function bearerChallenge(params: ChallengeParams, error?: BearerError): string {
  const parts = ['realm="mcp"'];
  if (error !== undefined) parts.push(`error="${error}"`);
  if (params.scope !== undefined) parts.push(`scope="${params.scope}"`);
  if (params.resourceMetadataUrl !== undefined) {
    parts.push(`resource_metadata="${params.resourceMetadataUrl}"`);
  }
  return `Bearer ${parts.join(', ')}`;
}

/**
 * RFC 6750 §3: no credentials gets a challenge without an error; bad credentials say
 * `invalid_token`. The reason is not echoed in detail so a probe learns nothing about which check
 * failed. The challenge names the metadata, so a stock MCP client finds where to log in.
 */
export function unauthorized(
  kind: 'missing' | 'invalid',
  params: ChallengeParams = NO_CHALLENGE_PARAMS,
): HttpProtocolError {
  return new HttpProtocolError(401, {
    code: ErrorCode.InvalidRequest,
    message:
      kind === 'missing'
        ? 'Unauthorized: send Authorization: Bearer <token>'
        : 'Unauthorized: invalid bearer token',
    headers: {
      'WWW-Authenticate': bearerChallenge(params, kind === 'missing' ? undefined : 'invalid_token'),
    },
  });
}

/**
 * RFC 6750 §3.1: a valid token that was not granted the scopes this server requires. 403, not
 * 401: a new token with the same grant would not help, the client has to ask for the scope.
 */
export function insufficientScope(missing: string[], params: ChallengeParams): HttpProtocolError {
  return new HttpProtocolError(403, {
    code: ErrorCode.InvalidRequest,
    message: `Forbidden: the token was not granted the scope ${missing.map((scope) => `"${scope}"`).join(', ')}; ask the authorization server for a token with scope="${params.scope ?? missing.join(' ')}"`,
    data: { requiredScope: params.scope ?? missing.join(' ') },
    headers: { 'WWW-Authenticate': bearerChallenge(params, 'insufficient_scope') },
  });
}
