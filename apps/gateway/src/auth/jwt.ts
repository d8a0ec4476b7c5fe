import { createRemoteJWKSet, jwtVerify, type JWTVerifyOptions } from 'jose';
import { bearerToken, unauthorized, type Authenticator } from './authenticator.js';

export interface JwtAuthOptions {
  /** HS256 shared secret; exclusive with jwksUrl. */
  secret?: string | undefined;
  jwksUrl?: string | undefined;
  tenantClaim: string;
  issuer?: string | undefined;
  audience?: string | undefined;
}

/** A non-empty string Postgres can store (text cannot hold U+0000: it would be a 500 later). */
function isIdentityPart(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && !value.includes('\u0000');
}

/**
 * MCP_AUTH=jwt: the principal is `sub`, the tenant a configurable string claim; `exp` is required. The algorithm
 * list is pinned per key kind so a token cannot pick a weaker one (alg confusion).
 */
export function createJwtAuthenticator(options: JwtAuthOptions): Authenticator {
  // jose checks `exp` only when present: without requiring it a leaked token would work forever.
  const verifyOptions: JWTVerifyOptions = { requiredClaims: ['exp', 'sub'] };
  if (options.issuer !== undefined) verifyOptions.issuer = options.issuer;
  if (options.audience !== undefined) verifyOptions.audience = options.audience;
  let verify: (token: string) => ReturnType<typeof jwtVerify>;
  if (options.secret !== undefined) {
    const key = new TextEncoder().encode(options.secret);
    verify = (token) => jwtVerify(token, key, { ...verifyOptions, algorithms: ['HS256'] });
  } else if (options.jwksUrl !== undefined) {
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
      let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
      try {
        ({ payload } = await verify(token));
      } catch {
        throw unauthorized('invalid');
      }
      const tenant = payload[options.tenantClaim];
      if (!isIdentityPart(payload.sub) || !isIdentityPart(tenant)) throw unauthorized('invalid');
      return { tenant, principal: payload.sub };
    },
  };
}
