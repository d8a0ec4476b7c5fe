import {
  Client,
  ClientCredentialsProvider,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import {
  createTestDatabase,
  freePort,
  launchProcess,
  startAuthorizationServer,
  type AuthorizationServer,
  type LaunchedProcess,
  type TestDatabase,
  createTestRedis,
  type TestRedis,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 34: the official SDK client, given nothing but the gateway's URL and its client
 * credentials, finds the authorization server through the gateway's Protected Resource Metadata,
 * gets a token for the gateway (RFC 8707 resource) from a real authorization server and connects.
 */
const SCOPE = 'mcp:tasks';
const CLIENT = { clientId: 'sdk-ci', clientSecret: 'sdk-ci-secret-0123456789', tenant: 'acme' };

let idp: AuthorizationServer;
let database: TestDatabase;
let redis: TestRedis;
let gateway: LaunchedProcess;
let mcpUrl: string;

beforeAll(async () => {
  const port = await freePort();
  mcpUrl = `http://127.0.0.1:${port}/mcp`;
  idp = await startAuthorizationServer({
    resources: { [mcpUrl]: { scope: SCOPE } },
    clients: [CLIENT],
  });
  database = await createTestDatabase('client_oauth_sdk');
  redis = await createTestRedis('client_oauth_sdk');
  gateway = await launchProcess({
    entry: 'apps/gateway/src/main.ts',
    env: {
      DATABASE_URL: database.connectionString,
      REDIS_URL: redis.url,
      REDIS_PREFIX: redis.prefix,
      PORT: String(port),
      HOST: '127.0.0.1',
      MCP_MIGRATE_ON_START: 'true',
      MCP_AUTH: 'jwt',
      MCP_JWT_ISSUER: idp.issuer,
      MCP_JWT_AUDIENCE: mcpUrl,
      MCP_JWT_REQUIRED_SCOPE: SCOPE,
      REQUEST_STATE_SECRET: 'client-oauth-request-state-secret-0123456789',
    },
    readyUrl: `http://127.0.0.1:${port}/readyz`,
    readyTimeoutMs: 60_000,
  });
}, 90_000);

afterAll(async () => {
  await gateway?.stop(5_000);
  await idp?.close();
  await redis?.deleteKeys();
  await database?.drop();
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
