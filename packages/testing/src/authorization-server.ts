import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Configuration, errors as OidcErrors } from 'oidc-provider';

/** A client of the authorization server: its tokens carry `tenant` in the tenant claim. */
export interface AuthorizationServerClient {
  clientId: string;
  clientSecret: string;
  tenant: string;
  /** Lifetime of this client's access tokens (default: the server's). */
  accessTokenTtlS?: number;
  /** More claims its access tokens carry (e.g. a console role claim). */
  claims?: Record<string, string>;
}

export interface AuthorizationServerOptions {
  /** Resource indicators (RFC 8707) it issues JWT access tokens for, each with its scopes. */
  resources: Record<string, { scope: string }>;
  clients: readonly AuthorizationServerClient[];
  /** The claim the tenant goes in (default `tenant`). */
  tenantClaim?: string;
  /** Access token lifetime (default 300 s). */
  accessTokenTtlS?: number;
  /** Users who can log in through the authorization code flow: account id → tenant. */
  accounts?: Record<string, string>;
  /**
   * `openid-only`: RFC 8414 metadata answers 404, as with identity providers that publish only
   * OpenID discovery (the fallback a resource server must take). Default: both.
   */
  metadata?: 'both' | 'openid-only';
}

export interface TokenRequest {
  clientId: string;
  resource: string;
  scope?: string;
  /** Overrides the client's secret (to provoke invalid_client). */
  clientSecret?: string;
}

export interface AuthorizationServer {
  /** The issuer (`iss`), `http://127.0.0.1:<port>`. */
  issuer: string;
  tokenEndpoint: string;
  /** A client-credentials grant with a resource indicator: an RFC 9068 JWT access token. */
  clientCredentialsToken(request: TokenRequest): Promise<string>;
  /** Signs from now on with a new key, still publishing the old one (a routine rotation). */
  rotateKeys(): Promise<void>;
  /** The `kid` signing new tokens now. */
  currentKid(): string;
  /**
   * Plays the user's browser: follows an authorization URL through the login and consent pages
   * (logging in as `accountId`, consenting to everything asked) and answers the redirect URL it
   * ends at, which carries the code (the caller delivers it to the client's loopback server).
   */
  approve(authorizationUrl: string, accountId: string): Promise<string>;
  close(): Promise<void>;
}

async function signingKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' };
}

/**
 * A real OpenID provider (`oidc-provider`, certified) on a loopback port, issuing RFC 9068 JWT
 * access tokens for the resources it is given, to the clients it is given. A key rotation swaps
 * the provider behind the same port, so the issuer and its URLs stay the same.
 */
export async function startAuthorizationServer(
  options: AuthorizationServerOptions,
): Promise<AuthorizationServer> {
  // Loaded here, not at the top: every test importing @mcp-tasks/testing would load it (and see
  // its runtime warnings) otherwise.
  const { default: Provider, errors } = await import('oidc-provider');
  const configuration = providerConfiguration(options, errors);
  let keys: JWK[] = [await signingKey()];
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server = createServer((req, res) => {
    if (
      options.metadata === 'openid-only' &&
      req.url?.startsWith('/.well-known/oauth-authorization-server') === true
    ) {
      res.statusCode = 404;
      res.end();
      return;
    }
    handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const install = (): void => {
    const callback = new Provider(issuer, configuration(keys)).callback();
    // Koa's handler returns a promise it handles itself (errors become HTTP answers).
    handler = (req, res) => void callback(req, res);
  };
  install();

  const tokenEndpoint = `${issuer}/token`;
  return {
    issuer,
    tokenEndpoint,
    clientCredentialsToken: (request) =>
      clientCredentialsToken(tokenEndpoint, options.clients, request),
    async rotateKeys() {
      keys = [await signingKey(), ...keys];
      install();
    },
    currentKid: () => keys[0]?.kid ?? '',
    approve: (authorizationUrl, accountId) => playBrowser(issuer, authorizationUrl, accountId),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The provider's configuration for a set of signing keys (newest first). */
function providerConfiguration(
  options: AuthorizationServerOptions,
  errors: typeof OidcErrors,
): (keys: JWK[]) => Configuration {
  const tenantClaim = options.tenantClaim ?? 'tenant';
  const tenants = new Map(options.clients.map((client) => [client.clientId, client.tenant]));
  const claimsOf = new Map(options.clients.map((client) => [client.clientId, client.claims ?? {}]));
  const ttlOf = (clientId: string): number =>
    options.clients.find((entry) => entry.clientId === clientId)?.accessTokenTtlS ??
    options.accessTokenTtlS ??
    300;
  return (keys) => ({
    clients: options.clients.map((client) => ({
      client_id: client.clientId,
      client_secret: client.clientSecret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
    })),
    jwks: { keys },
    cookies: { keys: ['authorization-server-test-cookie-key'] },
    ttl: {
      // The JWT's exp comes from here for this grant, not from the resource server's info.
      ClientCredentials: (_ctx, _token, client) => ttlOf(client.clientId),
    },
    scopes: [
      'openid',
      'offline_access',
      ...new Set(Object.values(options.resources).flatMap((r) => r.scope.split(' '))),
    ],
    features: {
      clientCredentials: { enabled: true },
      // Its login page takes any account id; consent grants everything asked (see approve()).
      devInteractions: { enabled: true },
      // Open dynamic client registration (RFC 7591), as MCP clients expect to find.
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator, client) => {
          const resource = options.resources[resourceIndicator];
          if (resource === undefined) throw new errors.InvalidTarget();
          return {
            scope: resource.scope,
            audience: resourceIndicator,
            accessTokenFormat: 'jwt',
            accessTokenTTL: ttlOf(client.clientId),
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    extraTokenClaims: (_ctx, token) => {
      const { clientId, accountId } = token as { clientId?: string; accountId?: string };
      const tenant =
        accountId !== undefined
          ? options.accounts?.[accountId]
          : clientId === undefined
            ? undefined
            : tenants.get(clientId);
      const extra = clientId === undefined ? {} : (claimsOf.get(clientId) ?? {});
      return tenant === undefined ? extra : { ...extra, [tenantClaim]: tenant };
    },
  });
}

async function clientCredentialsToken(
  tokenEndpoint: string,
  clients: readonly AuthorizationServerClient[],
  request: TokenRequest,
): Promise<string> {
  const client = clients.find((entry) => entry.clientId === request.clientId);
  const secret = request.clientSecret ?? client?.clientSecret ?? '';
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    resource: request.resource,
  });
  if (request.scope !== undefined) body.set('scope', request.scope);
  const response = await fetch(tokenEndpoint, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(request.clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body,
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok || typeof json.access_token !== 'string') {
    throw new Error(`token endpoint answered ${response.status}: ${JSON.stringify(json)}`);
  }
  return json.access_token;
}

/** `approve()`: follows redirects and submits the login and consent forms, keeping cookies. */
async function playBrowser(
  issuer: string,
  authorizationUrl: string,
  accountId: string,
): Promise<string> {
  const cookies = new Map<string, string>();
  const go = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string> | undefined),
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
      },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  };
  let response = await go(authorizationUrl);
  let current = authorizationUrl;
  for (let step = 0; step < 20; step += 1) {
    const location = response.headers.get('location');
    if (location !== null) {
      current = new URL(location, current).href;
      if (!current.startsWith(issuer)) return current;
      response = await go(current);
      continue;
    }
    const page = await response.text();
    const action = /action="([^"]+)"/.exec(page)?.[1];
    if (action === undefined) throw new Error(`no form at ${current}: ${page.slice(0, 300)}`);
    const form: Record<string, string> = page.includes('value="login"')
      ? { prompt: 'login', login: accountId, password: 'any' }
      : { prompt: 'consent' };
    current = new URL(action, current).href;
    response = await go(current, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
  }
  throw new Error(`the authorization did not end in a redirect: ${current}`);
}
