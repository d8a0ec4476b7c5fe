import type { JwtVerifier } from '../auth/jwt.js';
import { HttpProtocolError } from '../errors.js';
import { operatorOf, type ConsoleOperator } from './operators.js';

/**
 * Console access from a JWT when MCP_AUTH=jwt and MCP_CONSOLE_ROLE_CLAIM names a claim: the token
 * passes every check an MCP call's token passes (same key, issuer, audience, typ, age), and the
 * claim gives the scope with the grammar of MCP_CONSOLE_TOKENS minus the token: `acme`, `*`,
 * `acme:actions`, `*:actions`. A token without the claim is refused: an MCP client's token does
 * not open the console.
 */
export interface ConsoleJwtLogin {
  roleClaim: string;
  /** The operator, or why this token is refused (a sentence for the login page). */
  operatorFor(token: string): Promise<ConsoleJwtResult>;
}

export type ConsoleJwtResult =
  | { ok: true; operator: ConsoleOperator; expiresAtMs: number }
  | { ok: false; status: 401 | 503; message: string; retryAfterS?: number };

/** Three base64url parts: worth verifying as a JWT rather than looking up as an operator token. */
export function looksLikeJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]*$/.test(token);
}

/** `tenant`, `*`, either with `:actions`; undefined when the value is anything else. */
export function parseRoleClaim(value: unknown): { tenant: string; actions: boolean } | undefined {
  if (typeof value !== 'string') return undefined;
  const [tenant, flag, ...rest] = value.split(':');
  if (tenant === undefined || tenant === '' || tenant.includes('\u0000') || rest.length > 0)
    return undefined;
  if (flag !== undefined && flag !== 'actions') return undefined;
  return { tenant, actions: flag === 'actions' };
}

export function createConsoleJwtLogin(verifier: JwtVerifier, roleClaim: string): ConsoleJwtLogin {
  return {
    roleClaim,
    async operatorFor(token) {
      let payload;
      try {
        payload = await verifier.verify(token);
      } catch (error) {
        if (error instanceof HttpProtocolError && error.status === 503)
          return {
            ok: false,
            status: 503,
            message:
              "The identity provider's keys cannot be fetched now, so this token cannot be checked: try again in a few seconds.",
            retryAfterS: Number(error.headers['Retry-After'] ?? 5),
          };
        return {
          ok: false,
          status: 401,
          message:
            'That JWT is not valid for this server (signature, issuer, audience, type or expiry).',
        };
      }
      const role = parseRoleClaim(payload[roleClaim]);
      if (role === undefined)
        return {
          ok: false,
          status: 401,
          message:
            payload[roleClaim] === undefined
              ? `That JWT has no "${roleClaim}" claim: it does not grant console access.`
              : `That JWT's "${roleClaim}" claim must be "tenant", "*", or either with ":actions" appended.`,
        };
      const subject = typeof payload.sub === 'string' ? payload.sub : '?';
      return {
        ok: true,
        operator: operatorOf(token, role.tenant, role.actions, `jwt:${subject}`),
        expiresAtMs: (payload.exp ?? 0) * 1000,
      };
    },
  };
}
