import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ConsoleJwtLogin } from './jwt-login.js';
import { digestToken, type ConsoleOperator } from './operators.js';

/**
 * Stateless console sessions, so any replica serves any page: the cookie names the operator by
 * its token's digest and an expiry, MACed with a key derived from the token itself (the digest
 * in the cookie does not give the key). Every replica
 * configured with the same MCP_CONSOLE_TOKENS verifies it; removing a token from the list ends
 * its sessions everywhere. The CSRF token is a MAC of the session cookie under the same key, so
 * it is bound to that session (a form from another session, or another site, does not carry it).
 * A JWT operator's cookie is the JWT itself (`j1.<jwt>`), verified again on every request, so it
 * ends when the token expires and needs no secret shared by the replicas.
 */
export const SESSION_COOKIE = 'mcp_console';
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const VERSION = 'v1';
const JWT_PREFIX = 'j1.';

function mac(operator: ConsoleOperator, purpose: string, text: string): string {
  return createHmac('sha256', operator.sessionKey)
    .update(`${purpose}\0${text}`)
    .digest('base64url');
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export interface ConsoleSession {
  operator: ConsoleOperator;
  cookie: string;
  csrfToken: string;
}

export interface SessionKeeper {
  /** The operator whose token this is, compared by digest in constant time. */
  operatorForToken(token: string): ConsoleOperator | undefined;
  issue(operator: ConsoleOperator, nowMs: number): string;
  /** The cookie of a JWT operator: the token, checked again on each request. */
  issueForJwt(token: string): string;
  verify(cookie: string | undefined, nowMs: number): Promise<ConsoleSession | undefined>;
  csrfMatches(session: ConsoleSession, submitted: string | undefined): boolean;
}

export function createSessionKeeper(
  operators: readonly ConsoleOperator[],
  jwtLogin?: ConsoleJwtLogin,
): SessionKeeper {
  const byDigest = new Map(operators.map((operator) => [operator.tokenDigest, operator]));
  const sessionOf = (operator: ConsoleOperator, cookie: string): ConsoleSession => ({
    operator,
    cookie,
    csrfToken: mac(operator, 'csrf', cookie),
  });
  return {
    operatorForToken(token) {
      const digest = digestToken(token);
      return operators.find((operator) => sameText(operator.tokenDigest, digest));
    },
    issue(operator, nowMs) {
      const body = `${VERSION}.${operator.tokenDigest}.${Math.floor((nowMs + SESSION_TTL_MS) / 1000)}`;
      return `${body}.${mac(operator, 'session', body)}`;
    },
    issueForJwt(token) {
      return `${JWT_PREFIX}${token}`;
    },
    async verify(cookie, nowMs) {
      if (cookie === undefined) return undefined;
      if (cookie.startsWith(JWT_PREFIX)) {
        if (jwtLogin === undefined) return undefined;
        const result = await jwtLogin.operatorFor(cookie.slice(JWT_PREFIX.length));
        return result.ok ? sessionOf(result.operator, cookie) : undefined;
      }
      const parts = cookie.split('.');
      if (parts.length !== 4 || parts[0] !== VERSION) return undefined;
      const [, digest = '', expires = '', signature = ''] = parts;
      const operator = byDigest.get(digest);
      if (operator === undefined) return undefined;
      if (!sameText(signature, mac(operator, 'session', parts.slice(0, 3).join('.'))))
        return undefined;
      if (!/^\d+$/.test(expires) || Number(expires) * 1000 <= nowMs) return undefined;
      return sessionOf(operator, cookie);
    },
    csrfMatches(session, submitted) {
      return submitted !== undefined && sameText(submitted, session.csrfToken);
    },
  };
}
