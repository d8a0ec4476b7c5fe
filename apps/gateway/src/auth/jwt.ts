import { createRemoteJWKSet, jwtVerify, type JWTVerifyOptions } from 'jose';
import { bearerToken, unauthorized, type Authenticator } from './authenticator.js';
import { isSafeJwksUrl } from './jwks-url.js';

export interface JwtAuthOptions {
  /** HS256 shared secret; exclusive with jwksUrl. */
  secret?: string | undefined;
  /** https, or plain http on a loopback host only. */
  jwksUrl?: string | undefined;
  tenantClaim: string;
  /** Required with jwksUrl (env.ts enforces it): one provider's keys sign for many issuers. */
  issuer?: string | undefined;
  /** Required: an identity provider signs tokens for many APIs; only ours may pass. */
  audience: string;
  /** When set, the header `typ` must equal it; when unset, a present `typ` must be a JWT or access-token type. */
  typ?: string | undefined;
  /** Tokens issued (`iat`) longer ago are refused, and `iat` becomes required. */
  maxTokenAgeSeconds?: number | undefined;
}

/** A non-empty string Postgres can store (text cannot hold U+0000: it would be a 500 later). */
function isIdentityPart(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && !value.includes('\u0000');
}

/** `typ` values that say "this is a JWT / an OAuth access token" (RFC 7519, RFC 9068). */
const TOKEN_TYPES: ReadonlySet<string> = new Set([
  'jwt',
  'application/jwt',
  'at+jwt',
  'application/at+jwt',
]);

/**
 * MCP_AUTH=jwt: the principal is `sub`, the tenant a configurable string claim; `exp`, `sub` and
 * `aud` are required. The algorithm list is pinned per key kind so a token cannot pick a weaker
 * one (alg confusion). A token typed as something else (a logout token, a DPoP proof, a security
 * event) is refused even when its signature and audience check out.
 */
export function createJwtAuthenticator(options: JwtAuthOptions): Authenticator {
  // jose checks `exp` only when present: without requiring it a leaked token would work forever.
  const verifyOptions: JWTVerifyOptions = {
    requiredClaims: ['exp', 'sub'],
    audience: options.audience,
  };
  if (options.issuer !== undefined) verifyOptions.issuer = options.issuer;
  if (options.typ !== undefined) verifyOptions.typ = options.typ;
  if (options.maxTokenAgeSeconds !== undefined) {
    verifyOptions.maxTokenAge = options.maxTokenAgeSeconds;
  }
  let verify: (token: string) => ReturnType<typeof jwtVerify>;
  if (options.secret !== undefined) {
    const key = new TextEncoder().encode(options.secret);
    verify = (token) => jwtVerify(token, key, { ...verifyOptions, algorithms: ['HS256'] });
  } else if (options.jwksUrl !== undefined) {
    if (!isSafeJwksUrl(options.jwksUrl)) {
      throw new Error('MCP_JWKS_URL must use https (plain http only for a loopback host)');
    }
    const jwks = createRemoteJWKSet(new URL(options.jwksUrl));
    verify = (token) =>
      jwtVerify(token, jwks, {
        ...verifyOptions,
        algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      });
  } else {
    throw new Error('jwt authentication needs a secret or a JWKS URL');
  }
  return {
    async authenticate(authorization) {
      const token = bearerToken(authorization);
      if (token === undefined) throw unauthorized('missing');
      let verified: Awaited<ReturnType<typeof jwtVerify>>;
      try {
        verified = await verify(token);
      } catch {
        throw unauthorized('invalid');
      }
      const { payload, protectedHeader } = verified;
      const typ = protectedHeader.typ;
      if (typ !== undefined && options.typ === undefined && !TOKEN_TYPES.has(typ.toLowerCase())) {
        throw unauthorized('invalid');
      }
      const tenant = payload[options.tenantClaim];
      if (!isIdentityPart(payload.sub) || !isIdentityPart(tenant)) throw unauthorized('invalid');
      return { tenant, principal: payload.sub };
    },
  };
}
