import { jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { retryLater } from '../errors.js';
import { bearerToken, type Authenticator } from './authenticator.js';
import {
  NO_CHALLENGE_PARAMS,
  insufficientScope,
  unauthorized,
  type ChallengeParams,
} from './challenge.js';
import {
  createKeySource,
  IdentityProviderUnavailableError,
  type KeySource,
} from './issuer-keys.js';
import { isSafeJwksUrl } from './jwks-url.js';

/** How long a client is asked to wait while the identity provider's keys cannot be fetched. */
export const IDENTITY_PROVIDER_RETRY_AFTER_MS = 5_000;

export interface JwtAuthOptions {
  /** HS256 shared secret; exclusive with jwksUrl. */
  secret?: string | undefined;
  /** https, or plain http on a loopback host only. Neither this nor secret: discovered from issuer. */
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
  /** Each must be granted in `scope` (RFC 9068) or `scp` (Okta, Entra ID); else 403. */
  requiredScopes?: readonly string[] | undefined;
  /** Least time between two key fetches a token with an unknown `kid` causes (default 30 s). */
  jwksRefetchCooldownMs?: number | undefined;
  /** What 401 and 403 challenges say beside the error: the metadata URL and the scope. */
  challenge?: ChallengeParams | undefined;
}

/** The scopes a token was granted: `scope` is a space-separated string, `scp` a string or a list. */
export function grantedScopes(payload: JWTPayload): Set<string> {
  const granted = new Set<string>();
  for (const claim of [payload.scope, payload.scp]) {
    if (typeof claim === 'string') for (const scope of claim.split(' ')) granted.add(scope);
    else if (Array.isArray(claim))
      for (const scope of claim) if (typeof scope === 'string') granted.add(scope);
  }
  granted.delete('');
  return granted;
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

/** A verified token's claims, or a thrown 401 (bad token) / 503 (keys unreachable). */
export interface JwtVerifier {
  verify(token: string): Promise<JWTPayload>;
  /** Present when keys come from outside the process (JWKS, discovery). */
  keys: KeySource | undefined;
}

/**
 * The checks every token passes, whatever it is then used for (an MCP call, a console login):
 * signature, `exp`, `sub`, `aud`, `iss`, `typ`, age. The algorithm list is pinned per key kind
 * so a token cannot pick a weaker one (alg confusion). A token typed as something else (a logout
 * token, a DPoP proof, a security event) is refused even when its signature and audience check out.
 */
export function createJwtVerifier(options: JwtAuthOptions): JwtVerifier {
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
  const challenge = options.challenge ?? NO_CHALLENGE_PARAMS;
  let verify: (token: string) => ReturnType<typeof jwtVerify>;
  let keys: KeySource | undefined;
  if (options.secret !== undefined) {
    const key = new TextEncoder().encode(options.secret);
    verify = (token) => jwtVerify(token, key, { ...verifyOptions, algorithms: ['HS256'] });
  } else if (options.jwksUrl !== undefined || options.issuer !== undefined) {
    if (options.jwksUrl !== undefined && !isSafeJwksUrl(options.jwksUrl)) {
      throw new Error('MCP_JWKS_URL must use https (plain http only for a loopback host)');
    }
    const source = createKeySource({
      issuer: options.issuer,
      jwksUrl: options.jwksUrl,
      refetchCooldownMs: options.jwksRefetchCooldownMs ?? 30_000,
    });
    keys = source;
    verify = (token) =>
      jwtVerify(token, source.getKey, {
        ...verifyOptions,
        algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      });
  } else {
    throw new Error('jwt authentication needs a secret, a JWKS URL or an issuer');
  }
  return {
    keys,
    async verify(token) {
      let verified: Awaited<ReturnType<typeof jwtVerify>>;
      try {
        verified = await verify(token);
      } catch (error) {
        // Not the token's fault: a 401 would make the client throw away a good token.
        if (error instanceof IdentityProviderUnavailableError) {
          throw retryLater({
            reason: 'identity_provider_unavailable',
            message: `cannot verify the token now: the identity provider's keys are unreachable; retry in ${IDENTITY_PROVIDER_RETRY_AFTER_MS / 1000} s`,
            retryAfterMs: IDENTITY_PROVIDER_RETRY_AFTER_MS,
          });
        }
        throw unauthorized('invalid', challenge);
      }
      const { payload, protectedHeader } = verified;
      const typ = protectedHeader.typ;
      if (typ !== undefined && options.typ === undefined && !TOKEN_TYPES.has(typ.toLowerCase())) {
        throw unauthorized('invalid', challenge);
      }
      return payload;
    },
  };
}

/**
 * MCP_AUTH=jwt: the principal is `sub`, the tenant a configurable string claim; `exp`, `sub` and
 * `aud` are required (createJwtVerifier).
 */
export function createJwtAuthenticator(options: JwtAuthOptions): Authenticator {
  const challenge = options.challenge ?? NO_CHALLENGE_PARAMS;
  const requiredScopes = options.requiredScopes ?? [];
  const verifier = createJwtVerifier(options);
  const keys = verifier.keys;
  return {
    async authenticate(authorization) {
      const token = bearerToken(authorization);
      if (token === undefined) throw unauthorized('missing', challenge);
      const payload = await verifier.verify(token);
      const tenant = payload[options.tenantClaim];
      if (!isIdentityPart(payload.sub) || !isIdentityPart(tenant)) {
        throw unauthorized('invalid', challenge);
      }
      if (requiredScopes.length > 0) {
        const granted = grantedScopes(payload);
        const missing = requiredScopes.filter((scope) => !granted.has(scope));
        if (missing.length > 0) throw insufficientScope(missing, challenge);
      }
      return { tenant, principal: payload.sub };
    },
    ...(keys === undefined ? {} : { ready: () => keys.check() }),
  };
}
