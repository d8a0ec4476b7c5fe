import {
  Client,
  ClientCredentialsProvider,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type OAuthClientMetadata,
  type OAuthClientProvider,
} from '@modelcontextprotocol/client';
import type { AuthorizationServer } from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCredentials, createClient, type TokenSource } from '../src/index.js';
import { SCOPE, startOAuthGateway, type OAuthGateway } from './support/oauth-gateway.js';

/**
 * Issue 34: clients that know nothing but the gateway's URL and their client credentials find the
 * authorization server through the gateway's Protected Resource Metadata, get a token for the
 * gateway (RFC 8707 resource) from a real authorization server and connect: the official SDK
 * client and our client library's token source.
 */
const CLIENT = { clientId: 'sdk-ci', clientSecret: 'sdk-ci-secret-0123456789', tenant: 'acme' };
/** Its tokens live 2 s: every wait past that needs a refresh. */
const SHORT = {
  clientId: 'short-ci',
  clientSecret: 'short-ci-secret-0123456789',
  tenant: 'acme',
  accessTokenTtlS: 2,
};
const LABEL = 'client_oauth_sdk';
const OPTIONS = { clients: [CLIENT, SHORT], accounts: { alice: 'acme' } };

let setup: OAuthGateway;
let idp: AuthorizationServer;
let mcpUrl: string;

beforeAll(async () => {
  setup = await startOAuthGateway(LABEL, OPTIONS);
  ({ idp, mcpUrl } = setup);
}, 90_000);

afterAll(async () => {
  await setup?.close();
});

describe('the official SDK client with client credentials', () => {
  it('connects from nothing but the URL: 401 → metadata → token for the resource → tools', async () => {
    const provider = new ClientCredentialsProvider({
      clientId: CLIENT.clientId,
      clientSecret: CLIENT.clientSecret,
      scope: SCOPE,
      expectedIssuer: idp.issuer,
    });
    const sdk = new Client(
      { name: 'oauth-sdk', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await sdk.connect(
      new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }),
    );
    const { tools } = await sdk.listTools();
    expect(tools.map((tool) => tool.name)).toContain('generate_report');
    const token = provider.tokens()?.access_token ?? '';
    const claims = JSON.parse(
      Buffer.from(token.split('.')[1] ?? '', 'base64url').toString(),
    ) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: idp.issuer, aud: mcpUrl, scope: SCOPE, tenant: 'acme' });
    await sdk.close();
  });
});

/**
 * What a desktop MCP client does for a person: it registers itself, sends the user to the
 * authorization URL, and takes the code from its redirect. Kept in memory; the test is the user.
 */
class InteractiveUser implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  private client: Awaited<ReturnType<OAuthClientProvider['clientInformation']>>;
  private stored: Awaited<ReturnType<OAuthClientProvider['tokens']>>;
  private verifier = '';
  get redirectUrl(): string {
    // Never listened on: the test takes the code from the redirect itself.
    return 'http://127.0.0.1:9/callback';
  }
  get clientMetadata(): OAuthClientMetadata {
    const metadata: OAuthClientMetadata = {
      client_name: 'sdk-interactive',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    };
    return metadata;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(information: NonNullable<typeof this.client>) {
    this.client = information;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: NonNullable<typeof this.stored>) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe('the official SDK client with the authorization code flow', () => {
  it('registers itself, sends the user to consent, and connects with the code it gets back', async () => {
    const user = new InteractiveUser();
    const client = () =>
      new Client(
        { name: 'oauth-sdk-interactive', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } } },
      );
    const first = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: user });
    await expect(client().connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    const authorizationUrl = user.authorizationUrl?.href ?? '';
    expect(new URL(authorizationUrl).searchParams.get('resource')).toBe(mcpUrl);
    const redirect = await idp.approve(authorizationUrl, 'alice');
    await first.finishAuth(new URL(redirect).searchParams);
    const sdk = client();
    await sdk.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: user }));
    const { tools } = await sdk.listTools();
    expect(tools.map((tool) => tool.name)).toContain('generate_report');
    await sdk.close();
  });
});

describe('our client library with a token source', () => {
  it('logs in with client credentials from the URL alone and keeps a task handle across token refreshes', async () => {
    const seen: string[] = [];
    const source = clientCredentials({ url: mcpUrl, ...SHORT, refreshMarginMs: 0 });
    const recording: TokenSource = async (context) => {
      const token = await source(context);
      if (token !== undefined && !seen.includes(token)) seen.push(token);
      return token;
    };
    const client = createClient({ url: mcpUrl, getToken: recording });
    const outcome = await client.callTool('generate_report', { size: 'small' });
    if (outcome.kind !== 'task') throw new Error('expected a task');
    // Past the first token's lifetime: the handle's next read needs (and gets) a new token.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const snapshot = await outcome.handle.get();
    expect(snapshot.taskId).toBe(outcome.created.taskId);
    expect(seen).toHaveLength(2);
  });

  it('asks the source again with the refused token after a 401, and retries once with the new one', async () => {
    const source = clientCredentials({ url: mcpUrl, ...CLIENT });
    const asked: { rejected?: string }[] = [];
    const getToken: TokenSource = (context) => {
      asked.push(context);
      return asked.length === 1 ? 'revoked-token' : source(context);
    };
    const tools = await createClient({ url: mcpUrl, getToken }).listTools();
    expect(tools.map((tool) => tool.name)).toContain('generate_report');
    expect(asked).toEqual([{}, { rejected: 'revoked-token' }]);
  });
});
