import { createHash, timingSafeEqual } from 'node:crypto';
import type { TokenEntry } from '../env.js';
import { bearerToken, unauthorized, type Authenticator } from './authenticator.js';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * MCP_AUTH=tokens: static bearer tokens. Tokens are compared as SHA-256 digests with
 * timingSafeEqual against every entry, so neither the length nor the position of a match shows
 * in the timing.
 */
export function createTokenAuthenticator(entries: readonly TokenEntry[]): Authenticator {
  const known = entries.map((entry) => ({ ...entry, digest: digest(entry.token) }));
  return {
    authenticate(authorization) {
      const token = bearerToken(authorization);
      if (token === undefined) return Promise.reject(unauthorized('missing'));
      const presented = digest(token);
      let match: TokenEntry | undefined;
      for (const entry of known) {
        if (timingSafeEqual(entry.digest, presented) && match === undefined) match = entry;
      }
      if (match === undefined) return Promise.reject(unauthorized('invalid'));
      return Promise.resolve({ tenant: match.tenant, principal: match.principal });
    },
  };
}
