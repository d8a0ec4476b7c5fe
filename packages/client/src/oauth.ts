import type { TokenSource } from './client.js';

/** What a client needs to get a token for an MCP endpoint, found from the endpoint's URL alone. */
export interface AuthorizationInfo {
  /** The resource to ask a token for (RFC 8707), as the server's metadata names it. */
  resource: string;
  /** The authorization server's issuer. */
  issuer: string;
  tokenEndpoint: string;
  authorizationEndpoint?: string;
  registrationEndpoint?: string;
  scopesSupported: string[];
}

/** An OAuth step failed: the message says which URL answered what. */
export class OAuthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OAuthError';
  }
}

type FetchLike = typeof fetch;

async function getJson(
  fetchFn: FetchLike,
  url: string,
): Promise<Record<string, unknown> | undefined> {
  let response: Response;
  try {
    response = await fetchFn(url, { headers: { accept: 'application/json' } });
  } catch (error) {
    throw new OAuthError(`cannot reach ${url}: ${(error as Error).message}`);
  }
  if (response.status === 404) return undefined;
  if (!response.ok) throw new OAuthError(`${url} answered HTTP ${response.status}`);
  const body: unknown = await response.json();
  if (typeof body !== 'object' || body === null) throw new OAuthError(`${url}: not a JSON object`);
  return body as Record<string, unknown>;
}

/** RFC 9728 §3.1 / RFC 8414 §3.1: the well-known segment goes between the host and the path. */
function wellKnown(base: string, name: string): string {
  const url = new URL(base);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}/.well-known/${name}${path}`;
}

/**
 * The MCP authorization discovery: the endpoint's Protected Resource Metadata (RFC 9728, the
 * path-suffixed URL then the root one), then its first authorization server's metadata (RFC 8414,
 * then OpenID discovery), checking each names what was asked for.
 */
export async function discoverAuthorization(
  mcpUrl: string,
  fetchFn: FetchLike = globalThis.fetch.bind(globalThis),
): Promise<AuthorizationInfo> {
  const origin = new URL(mcpUrl).origin;
  const resourceMetadata =
    (await getJson(fetchFn, wellKnown(mcpUrl, 'oauth-protected-resource'))) ??
    (await getJson(fetchFn, `${origin}/.well-known/oauth-protected-resource`));
  if (resourceMetadata === undefined) {
    throw new OAuthError(
      `${mcpUrl} publishes no OAuth Protected Resource Metadata: it does not take OAuth tokens (use --token)`,
    );
  }
  const resource = resourceMetadata.resource;
  const servers = resourceMetadata.authorization_servers;
  if (typeof resource !== 'string' || !Array.isArray(servers) || typeof servers[0] !== 'string') {
    throw new OAuthError(`the metadata of ${mcpUrl} names no resource or authorization server`);
  }
  const issuer = servers[0];
  const candidates = [
    wellKnown(issuer, 'oauth-authorization-server'),
    wellKnown(issuer, 'openid-configuration'),
    `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
  ];
  for (const url of [...new Set(candidates)]) {
    const metadata = await getJson(fetchFn, url);
    if (metadata === undefined) continue;
    // RFC 8414 §3.3: metadata that names another issuer must not be used.
    if (metadata.issuer !== issuer) {
      throw new OAuthError(`${url} names the issuer ${String(metadata.issuer)}, not ${issuer}`);
    }
    if (typeof metadata.token_endpoint !== 'string') {
      throw new OAuthError(`${url} names no token_endpoint`);
    }
    return {
      resource,
      issuer,
      tokenEndpoint: metadata.token_endpoint,
      ...(typeof metadata.authorization_endpoint === 'string'
        ? { authorizationEndpoint: metadata.authorization_endpoint }
        : {}),
      ...(typeof metadata.registration_endpoint === 'string'
        ? { registrationEndpoint: metadata.registration_endpoint }
        : {}),
      scopesSupported: Array.isArray(resourceMetadata.scopes_supported)
        ? resourceMetadata.scopes_supported.filter((s): s is string => typeof s === 'string')
        : [],
    };
  }
  throw new OAuthError(`${issuer} publishes no authorization server metadata`);
}

export interface ClientCredentialsOptions {
  /** The MCP endpoint: where the token endpoint and the resource are discovered from. */
  url: string;
  clientId: string;
  clientSecret: string;
  /** Default: every scope the server's metadata lists. */
  scope?: string;
  fetch?: FetchLike;
  /** Refresh this long before the token expires (default 30 s). */
  refreshMarginMs?: number;
  /** Skips discovery (known token endpoint and resource). */
  authorization?: Pick<AuthorizationInfo, 'tokenEndpoint' | 'resource' | 'scopesSupported'>;
}

export interface AccessToken {
  accessToken: string;
  /** Epoch ms, when the server said. */
  expiresAt?: number;
}

export interface TokenResponse extends AccessToken {
  refreshToken?: string;
  scope?: string;
}

/** One token request (RFC 6749 §3.2); the error names the endpoint and what it said. */
export async function postTokenRequest(
  tokenEndpoint: string,
  body: URLSearchParams,
  options: { fetch?: FetchLike; basic?: { clientId: string; clientSecret: string } } = {},
): Promise<TokenResponse> {
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (options.basic !== undefined) {
    const { clientId, clientSecret } = options.basic;
    headers.authorization = `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`)}`;
  }
  let response: Response;
  try {
    response = await fetchFn(tokenEndpoint, { method: 'POST', headers, body });
  } catch (error) {
    throw new OAuthError(`cannot reach ${tokenEndpoint}: ${(error as Error).message}`);
  }
  const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || typeof json.access_token !== 'string') {
    const reason =
      typeof json.error === 'string'
        ? `${json.error}${typeof json.error_description === 'string' ? `: ${json.error_description}` : ''}`
        : `HTTP ${response.status}`;
    const what =
      body.get('grant_type') === 'client_credentials'
        ? 'the client credentials'
        : `the ${body.get('grant_type') ?? 'token'} request`;
    throw new OAuthError(`${tokenEndpoint} refused ${what} (${reason})`);
  }
  return {
    accessToken: json.access_token,
    ...(typeof json.expires_in === 'number'
      ? { expiresAt: Date.now() + json.expires_in * 1000 }
      : {}),
    ...(typeof json.refresh_token === 'string' ? { refreshToken: json.refresh_token } : {}),
    ...(typeof json.scope === 'string' ? { scope: json.scope } : {}),
  };
}

/** A client-credentials grant (RFC 6749 §4.4) with the resource indicator (RFC 8707). */
export async function requestClientCredentialsToken(
  options: ClientCredentialsOptions,
  authorization: Pick<AuthorizationInfo, 'tokenEndpoint' | 'resource' | 'scopesSupported'>,
): Promise<AccessToken> {
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    resource: authorization.resource,
  });
  const scope = options.scope ?? authorization.scopesSupported.join(' ');
  if (scope !== '') body.set('scope', scope);
  const token = await postTokenRequest(authorization.tokenEndpoint, body, {
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    basic: { clientId: options.clientId, clientSecret: options.clientSecret },
  });
  return {
    accessToken: token.accessToken,
    ...(token.expiresAt === undefined ? {} : { expiresAt: token.expiresAt }),
  };
}

/**
 * A token source for `createClient({ getToken })` that logs in with client credentials: the token
 * endpoint and resource are discovered from the endpoint's metadata once, a token is kept until
 * shortly before it expires, and a token the server refused is replaced at once. Concurrent
 * requests share one token request.
 */
export function clientCredentials(options: ClientCredentialsOptions): TokenSource {
  const margin = options.refreshMarginMs ?? 30_000;
  let authorization = options.authorization;
  let current: AccessToken | undefined;
  let pending: Promise<AccessToken> | undefined;
  const fetchNew = async (): Promise<AccessToken> => {
    authorization ??= await discoverAuthorization(options.url, options.fetch);
    return requestClientCredentialsToken(options, authorization);
  };
  return async ({ rejected }) => {
    const usable =
      current !== undefined &&
      current.accessToken !== rejected &&
      (current.expiresAt === undefined || current.expiresAt - margin > Date.now());
    if (usable) return current?.accessToken;
    pending ??= fetchNew().finally(() => (pending = undefined));
    current = await pending;
    return current.accessToken;
  };
}
