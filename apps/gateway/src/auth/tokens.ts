import { createHash, timingSafeEqual } from 'node:crypto';
import type { TokenEntry } from '../env.js';
import { bearerToken, type Authenticator, type Identity } from './authenticator.js';
import { unauthorized } from './challenge.js';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * MCP_AUTH=tokens: static bearer tokens. Tokens are compared as SHA-256 digests with
 * timingSafeEqual against every entry, so neither the length nor the position of a match shows
 * in the timing.
 *
 * A token that matched is remembered by its raw value, so a client's every later request skips
 * the hash (a tenth of a poll's CPU). The list is fixed at startup (revoking a token means a
 * restart), so a remembered token can never outlive its entry, and only tokens that matched are
 * kept, so the cache holds at most one key per entry. A miss tells a caller nothing the 401 does not.
 */
export function createTokenAuthenticator(entries: readonly TokenEntry[]): Authenticator {
  const known = entries.map((entry) => ({ ...entry, digest: digest(entry.token) }));
  const accepted = new Map<string, Identity>();
  return {
    authenticate(authorization) {
      const token = bearerToken(authorization);
      if (token === undefined) return Promise.reject(unauthorized('missing'));
      const remembered = accepted.get(token);
      if (remembered !== undefined) return Promise.resolve({ ...remembered });
      const presented = digest(token);
      let match: TokenEntry | undefined;
      for (const entry of known) {
        if (timingSafeEqual(entry.digest, presented) && match === undefined) match = entry;
      }
      if (match === undefined) return Promise.reject(unauthorized('invalid'));
      const identity = { tenant: match.tenant, principal: match.principal };
      accepted.set(token, identity);
      return Promise.resolve({ ...identity });
    },
  };
}
