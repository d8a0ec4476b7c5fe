import { isSafeJwksUrl } from '../auth/jwks-url.js';
import { splitList, type Env } from './schema.js';

// MCP_AUTH and what each mode needs: tokens, a JWT verifier's keys, the resource metadata.

export type AuthConfig =
  | { mode: 'none' }
  | { mode: 'tokens'; tokens: TokenEntry[] }
  | {
      mode: 'jwt';
      secret: string | undefined;
      jwksUrl: string | undefined;
      tenantClaim: string;
      issuer: string | undefined;
      audience: string;
      typ: string | undefined;
      maxTokenAgeSeconds: number;
      /** Every one of these must be granted (`scope` or `scp` claim); none when empty. */
      requiredScopes: string[];
      /** MCP_JWKS_REFETCH_COOLDOWN_MS: least time between two key fetches an unknown `kid` causes. */
      jwksRefetchCooldownMs: number;
      /** What RFC 9728 metadata says; undefined when there is no public URL to name. */
      resourceMetadata: ResourceMetadataConfig | undefined;
    };

/** The Protected Resource Metadata (RFC 9728) a stock MCP client reads to find where to log in. */
export interface ResourceMetadataConfig {
  /** The public URL of /mcp, as clients reach it (through the proxy or ingress). */
  resource: string;
  authorizationServers: string[];
  scopesSupported: string[];
}

export interface TokenEntry {
  token: string;
  tenant: string;
  principal: string;
}

export interface TokenEntry {
  token: string;
  tenant: string;
  principal: string;
}

/** `token:tenant:principal,...`; the token itself may not contain `:` or `,`. */
export function parseTokenList(value: string): { tokens: TokenEntry[]; problems: string[] } {
  const tokens: TokenEntry[] = [];
  const problems: string[] = [];
  for (const [index, entry] of (splitList(value) ?? []).entries()) {
    const parts = entry.split(':');
    const [token, tenant, principal] = parts;
    if (parts.length !== 3 || !token || !tenant || !principal) {
      problems.push(`MCP_TOKENS: entry ${index + 1} must be token:tenant:principal`);
      continue;
    }
    if (token.length < 16)
      problems.push(`MCP_TOKENS: entry ${index + 1} token is shorter than 16 characters`);
    // The first match would win silently, handing one caller another's tenant.
    const earlier = tokens.findIndex((entry) => entry.token === token);
    if (earlier >= 0)
      problems.push(`MCP_TOKENS: entry ${index + 1} repeats the token of entry ${earlier + 1}`);
    tokens.push({ token, tenant, principal });
  }
  if (tokens.length === 0 && problems.length === 0) problems.push('MCP_TOKENS: no token entries');
  return { tokens, problems };
}

/** Undefined when MCP_AUTH itself is invalid: the mode's own requirements are then unknown. */
export function buildAuth(env: Partial<Env>, problems: string[]): AuthConfig | undefined {
  switch (env.MCP_AUTH) {
    case undefined:
      return undefined;
    case 'none':
      return { mode: 'none' };
    case 'tokens': {
      if (env.MCP_TOKENS === undefined) {
        problems.push('MCP_TOKENS: required when MCP_AUTH=tokens');
        return { mode: 'tokens', tokens: [] };
      }
      const parsed = parseTokenList(env.MCP_TOKENS);
      problems.push(...parsed.problems);
      return { mode: 'tokens', tokens: parsed.tokens };
    }
    case 'jwt':
      return buildJwtAuth(env, problems);
  }
}

const isHttpUrl = (value: string): boolean =>
  URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol);

/**
 * Keys come from MCP_JWT_SECRET, from MCP_JWKS_URL, or (neither set) from the issuer's own
 * metadata (RFC 8414 / OpenID discovery), so MCP_JWT_ISSUER alone is enough.
 */
function buildJwtAuth(env: Partial<Env>, problems: string[]): AuthConfig {
  const secret = env.MCP_JWT_SECRET;
  const jwksUrl = env.MCP_JWKS_URL;
  const issuer = env.MCP_JWT_ISSUER;
  if (secret !== undefined && jwksUrl !== undefined) {
    problems.push('MCP_JWT_SECRET / MCP_JWKS_URL: set one, not both');
  } else if (secret === undefined && jwksUrl === undefined && issuer === undefined) {
    problems.push(
      "MCP_JWT_ISSUER: required when MCP_AUTH=jwt without MCP_JWT_SECRET or MCP_JWKS_URL (the keys are discovered from the issuer's metadata)",
    );
  }
  if (secret !== undefined && secret.length < 32) {
    problems.push('MCP_JWT_SECRET: must be at least 32 characters');
  }
  if (env.MCP_JWT_AUDIENCE === undefined) {
    problems.push(
      'MCP_JWT_AUDIENCE: required when MCP_AUTH=jwt (the "aud" this server accepts; without it tokens the identity provider issued for other APIs would be accepted)',
    );
  }
  if (jwksUrl !== undefined && issuer === undefined) {
    problems.push(
      'MCP_JWT_ISSUER: required with MCP_JWKS_URL (the "iss" of the identity provider whose keys the JWKS publishes)',
    );
  }
  if (jwksUrl !== undefined && !isSafeJwksUrl(jwksUrl)) {
    problems.push(
      'MCP_JWKS_URL: must use https (plain http only for a loopback host: localhost, 127.0.0.0/8, [::1]); keys fetched over plain http can be replaced in transit',
    );
  }
  const discovers = secret === undefined && jwksUrl === undefined && issuer !== undefined;
  if (discovers && (!URL.canParse(issuer) || !isSafeJwksUrl(issuer))) {
    problems.push(
      'MCP_JWT_ISSUER: must be an https URL (plain http only for a loopback host) to discover the keys from it; or set MCP_JWKS_URL',
    );
  }
  const requiredScopes = (env.MCP_JWT_REQUIRED_SCOPE ?? '').split(' ').filter((s) => s !== '');
  return {
    mode: 'jwt',
    secret,
    jwksUrl,
    tenantClaim: env.MCP_JWT_TENANT_CLAIM ?? 'tenant',
    issuer,
    audience: env.MCP_JWT_AUDIENCE ?? '',
    typ: env.MCP_JWT_TYP,
    maxTokenAgeSeconds: env.MCP_JWT_MAX_TOKEN_AGE_S ?? 86_400,
    requiredScopes,
    jwksRefetchCooldownMs: env.MCP_JWKS_REFETCH_COOLDOWN_MS ?? 30_000,
    resourceMetadata: buildResourceMetadata(env, requiredScopes, problems),
  };
}

/**
 * The resource is MCP_RESOURCE_URL, else MCP_JWT_AUDIENCE when that is a URL (the usual case:
 * the audience clients ask for with RFC 8707 `resource` is the URL of /mcp). The authorization
 * servers are MCP_AUTHORIZATION_SERVERS, else the issuer. Without both, there is nothing a client
 * could use, so no metadata is served.
 */
function buildResourceMetadata(
  env: Partial<Env>,
  scopesSupported: string[],
  problems: string[],
): ResourceMetadataConfig | undefined {
  const audience = env.MCP_JWT_AUDIENCE;
  const resource =
    env.MCP_RESOURCE_URL ?? (audience !== undefined && isHttpUrl(audience) ? audience : undefined);
  if (resource !== undefined && !isHttpUrl(resource)) {
    problems.push('MCP_RESOURCE_URL: must be an http(s) URL (the public URL of /mcp)');
    return undefined;
  }
  const authorizationServers =
    splitList(env.MCP_AUTHORIZATION_SERVERS) ??
    (env.MCP_JWT_ISSUER === undefined ? [] : [env.MCP_JWT_ISSUER]);
  for (const server of authorizationServers) {
    if (!isHttpUrl(server)) {
      problems.push(`MCP_AUTHORIZATION_SERVERS: "${server}" is not an http(s) URL (an issuer)`);
    }
  }
  if (resource === undefined || authorizationServers.length === 0) return undefined;
  return { resource, authorizationServers, scopesSupported };
}
