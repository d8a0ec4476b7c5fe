import {
  createRemoteJWKSet,
  errors,
  type JWTVerifyGetKey,
  type FlattenedJWSInput,
  type JWSHeaderParameters,
} from 'jose';
import { isSafeJwksUrl } from './jwks-url.js';

/** The keys could not be had: the identity provider (or its metadata) is unreachable or wrong. */
export class IdentityProviderUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'IdentityProviderUnavailableError';
  }
}

export interface KeySource {
  getKey: JWTVerifyGetKey;
  /** Resolves once keys are at hand (discovered and fetched, and fresh); rejects with the reason. */
  check(): Promise<void>;
}

export interface KeySourceOptions {
  issuer?: string | undefined;
  /** Skips discovery (MCP_JWKS_URL, the override). */
  jwksUrl?: string | undefined;
  /** Least time between two JWKS fetches caused by a token with an unknown `kid`. */
  refetchCooldownMs: number;
  /** Each request to the identity provider gives up after this long. */
  timeoutMs?: number;
  /** Least time between two discovery attempts after one failed. */
  retryDiscoveryAfterMs?: number;
}

/**
 * Where an issuer publishes its metadata, in the order the MCP authorization spec tries them:
 * RFC 8414 (well-known inserted before the path), then OpenID Connect Discovery (inserted, then
 * appended, for an issuer with a path).
 */
export function discoveryUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const urls = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
  ];
  if (path !== '') urls.push(`${url.origin}${path}/.well-known/openid-configuration`);
  return urls;
}

/** jose's errors that mean "the keys could not be fetched", not "this token is bad". */
function isFetchFailure(error: unknown): boolean {
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return true;
  // A non-200 answer or unparsable JSON is a bare JOSEError; a network error is not a JOSEError.
  if (error instanceof errors.JOSEError) return error.code === 'ERR_JOSE_GENERIC';
  return true;
}

async function fetchMetadata(url: string, timeoutMs: number): Promise<unknown> {
  const response = await fetch(url, {
    headers: { accept: 'application/json' },
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (response.status === 404) return undefined;
  if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
  return response.json();
}

/** Finds `jwks_uri` in the issuer's metadata, checking the metadata is the issuer's own. */
async function discoverJwksUrl(issuer: string, timeoutMs: number): Promise<string> {
  const failures: string[] = [];
  for (const url of discoveryUrls(issuer)) {
    let metadata: unknown;
    try {
      metadata = await fetchMetadata(url, timeoutMs);
    } catch (error) {
      failures.push(`${url}: ${(error as Error).message}`);
      continue;
    }
    if (metadata === undefined) {
      failures.push(`${url}: 404`);
      continue;
    }
    const record = (typeof metadata === 'object' && metadata !== null ? metadata : {}) as Record<
      string,
      unknown
    >;
    // RFC 8414 §3.3: metadata naming another issuer must not be used (a mix-up or a wrong URL).
    if (record.issuer !== issuer) {
      throw new IdentityProviderUnavailableError(
        `${url} names the issuer ${JSON.stringify(record.issuer)}, not MCP_JWT_ISSUER=${issuer}; set MCP_JWT_ISSUER to the exact "iss" of the tokens`,
      );
    }
    const jwksUri = record.jwks_uri;
    if (typeof jwksUri !== 'string' || !URL.canParse(jwksUri) || !isSafeJwksUrl(jwksUri)) {
      throw new IdentityProviderUnavailableError(
        `${url} has no usable jwks_uri (${JSON.stringify(jwksUri)}: an https URL is required); set MCP_JWKS_URL`,
      );
    }
    return jwksUri;
  }
  throw new IdentityProviderUnavailableError(
    `cannot discover the keys of ${issuer}: ${failures.join('; ')}`,
  );
}

/**
 * The verification keys of one identity provider, found from the issuer alone and kept current:
 * the JWKS is cached, refetched when a token names a `kid` it does not hold (so a key rotation
 * needs no restart) but at most once per cooldown, so a flood of made-up kids cannot turn into a
 * flood of requests to the provider. Nothing here runs at startup: an unreachable provider fails
 * requests (503) and readiness, it never stops the process.
 */
export function createKeySource(options: KeySourceOptions): KeySource {
  const timeoutMs = options.timeoutMs ?? 5000;
  const retryDiscoveryAfterMs = options.retryDiscoveryAfterMs ?? 5000;
  type RemoteSet = ReturnType<typeof createRemoteJWKSet>;
  let jwks: RemoteSet | undefined;
  let pending: Promise<RemoteSet> | undefined;
  let lastFailure: { at: number; error: IdentityProviderUnavailableError } | undefined;

  const open = (url: string): RemoteSet =>
    createRemoteJWKSet(new URL(url), {
      cooldownDuration: options.refetchCooldownMs,
      timeoutDuration: timeoutMs,
    });
  if (options.jwksUrl !== undefined) jwks = open(options.jwksUrl);

  async function resolveSet(): Promise<RemoteSet> {
    if (jwks !== undefined) return jwks;
    if (lastFailure !== undefined && Date.now() - lastFailure.at < retryDiscoveryAfterMs) {
      throw lastFailure.error;
    }
    const issuer = options.issuer;
    if (issuer === undefined) throw new Error('a key source needs an issuer or a JWKS URL');
    // One discovery at a time, whatever the number of requests waiting for it.
    pending ??= discoverJwksUrl(issuer, timeoutMs)
      .then((url) => {
        jwks = open(url);
        lastFailure = undefined;
        return jwks;
      })
      .catch((error: unknown) => {
        const failure =
          error instanceof IdentityProviderUnavailableError
            ? error
            : new IdentityProviderUnavailableError(String(error), { cause: error });
        lastFailure = { at: Date.now(), error: failure };
        throw failure;
      })
      .finally(() => (pending = undefined));
    return pending;
  }

  function unavailable(error: unknown): IdentityProviderUnavailableError {
    return new IdentityProviderUnavailableError(
      `cannot fetch the identity provider's keys: ${(error as Error).message}`,
      { cause: error },
    );
  }

  return {
    async getKey(header: JWSHeaderParameters, token: FlattenedJWSInput) {
      const set = await resolveSet();
      try {
        return await set(header, token);
      } catch (error) {
        throw isFetchFailure(error) ? unavailable(error) : error;
      }
    },
    async check() {
      const set = await resolveSet();
      if (set.fresh) return;
      try {
        await set.reload();
      } catch (error) {
        throw unavailable(error);
      }
    },
  };
}
