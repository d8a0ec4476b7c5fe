import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  discoverAuthorization,
  OAuthError,
  postTokenRequest,
  type AuthorizationInfo,
  type TokenResponse,
} from '../oauth.js';
import type { StoredLogin } from './credential-store.js';

export interface BrowserLoginOptions {
  /** The MCP endpoint. */
  url: string;
  /** A client registered beforehand (public, no secret); default: register one (RFC 7591). */
  clientId?: string;
  /** Default: the scopes the endpoint's metadata lists, plus offline_access for a refresh token. */
  scope?: string;
  /** Shows the user the URL to open (print it, open a browser). */
  onAuthorizationUrl: (url: string) => void | Promise<void>;
  /** How long to wait for the user (default 5 min). */
  timeoutMs?: number;
}

const base64url = (bytes: Buffer): string => bytes.toString('base64url');

/**
 * Authorization code with PKCE (S256) and a loopback redirect (RFC 8252 §7.3): a one-shot server
 * on 127.0.0.1 and a free port receives the code, so no secret lives in the CLI. Without a client
 * id, a public client is registered dynamically (RFC 7591) for this redirect URI.
 */
export async function loginWithBrowser(options: BrowserLoginOptions): Promise<StoredLogin> {
  const authorization = await discoverAuthorization(options.url);
  if (authorization.authorizationEndpoint === undefined) {
    throw new OAuthError(`${authorization.issuer} has no authorization_endpoint`);
  }
  const state = base64url(randomBytes(16));
  const verifier = base64url(randomBytes(32));
  const challenge = base64url(createHash('sha256').update(verifier).digest());

  const callback = await listenForCallback(state);
  const redirectUri = callback.redirectUri;
  try {
    const clientId =
      options.clientId ??
      (await register(authorization.registrationEndpoint, redirectUri, authorization.issuer));
    const scope = options.scope ?? [...authorization.scopesSupported, 'offline_access'].join(' ');
    const authorize = new URL(authorization.authorizationEndpoint);
    for (const [key, value] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope,
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: authorization.resource,
      // offline_access is granted only with explicit consent (OpenID Connect Core §11).
      prompt: 'consent',
    })) {
      authorize.searchParams.set(key, value);
    }
    await options.onAuthorizationUrl(authorize.href);
    const code = codeOf(await inTime(callback.received, options.timeoutMs ?? 300_000));
    const token = await postTokenRequest(
      authorization.tokenEndpoint,
      new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        client_id: clientId,
        code_verifier: verifier,
        resource: authorization.resource,
      }),
    );
    return storedLogin(options.url, authorization, clientId, token);
  } finally {
    callback.close();
  }
}

/** The one-shot loopback server: answers the browser and hands over the callback's query. */
async function listenForCallback(state: string): Promise<{
  redirectUri: string;
  received: Promise<URLSearchParams>;
  close: () => void;
}> {
  let deliver: (query: URLSearchParams) => void = () => undefined;
  const received = new Promise<URLSearchParams>((resolve) => (deliver = resolve));
  const server = createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
    if (!req.url?.startsWith('/callback') || query.get('state') !== state) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    res.end(
      query.has('code')
        ? 'Logged in. You can close this window and go back to the terminal.\n'
        : `Login failed: ${query.get('error') ?? 'no code'}\n`,
    );
    deliver(query);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    redirectUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    received,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** The browser's answer, or an OAuthError once the user has taken too long. */
async function inTime(
  received: Promise<URLSearchParams>,
  timeoutMs: number,
): Promise<URLSearchParams> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    received,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new OAuthError('no answer from the browser in time; run login again')),
        timeoutMs,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The authorization code from the callback's query, or the server's refusal as an OAuthError. */
function codeOf(query: URLSearchParams): string {
  const code = query.get('code');
  if (code === null) {
    const description = query.get('error_description');
    throw new OAuthError(
      `the authorization server refused the login (${query.get('error') ?? 'no code'}${description === null ? '' : `: ${description}`})`,
    );
  }
  return code;
}

function storedLogin(
  url: string,
  authorization: AuthorizationInfo,
  clientId: string,
  token: TokenResponse,
): StoredLogin {
  return {
    grant: 'authorization_code',
    url,
    issuer: authorization.issuer,
    tokenEndpoint: authorization.tokenEndpoint,
    resource: authorization.resource,
    clientId,
    ...(token.scope === undefined ? {} : { scope: token.scope }),
    accessToken: token.accessToken,
    ...(token.expiresAt === undefined ? {} : { expiresAt: token.expiresAt }),
    ...(token.refreshToken === undefined ? {} : { refreshToken: token.refreshToken }),
  };
}

/** RFC 7591: a public native client for this one redirect URI. */
async function register(
  endpoint: string | undefined,
  redirectUri: string,
  issuer: string,
): Promise<string> {
  if (endpoint === undefined) {
    throw new OAuthError(
      `${issuer} does not allow dynamic client registration: register a public client with redirect URI http://127.0.0.1/callback and pass --client-id`,
    );
  }
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        client_name: 'mcp-tasks CLI',
        application_type: 'native',
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    });
  } catch (error) {
    throw new OAuthError(`cannot reach ${endpoint}: ${(error as Error).message}`);
  }
  const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || typeof json.client_id !== 'string') {
    throw new OAuthError(
      `${endpoint} refused to register the CLI (${typeof json.error === 'string' ? json.error : `HTTP ${response.status}`})`,
    );
  }
  return json.client_id;
}
