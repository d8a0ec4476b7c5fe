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
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCredentials, createClient, type TokenSource } from '../src/index.js';
import { CredentialStore } from '../src/node/index.js';
import { runCli } from './support/cli.js';

/**
 * Issue 34: clients that know nothing but the gateway's URL and their client credentials find the
 * authorization server through the gateway's Protected Resource Metadata, get a token for the
 * gateway (RFC 8707 resource) from a real authorization server and connect: the official SDK
 * client, our client library's token source, and `mcp-tasks login`.
 */
const SCOPE = 'mcp:tasks';
const CLIENT = { clientId: 'sdk-ci', clientSecret: 'sdk-ci-secret-0123456789', tenant: 'acme' };
/** Its tokens live 2 s: every wait past that needs a refresh. */
const SHORT = {
  clientId: 'short-ci',
  clientSecret: 'short-ci-secret-0123456789',
  tenant: 'acme',
  accessTokenTtlS: 2,
};

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
    clients: [CLIENT, SHORT],
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

describe('mcp-tasks login', () => {
  it('logs in with client credentials, stores them mode 600, and later commands use them', async () => {
    const configDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-config-'));
    const env = {
      MCP_URL: mcpUrl,
      MCP_TASKS_CONFIG_DIR: configDir,
      MCP_TASKS_STATE_DIR: await mkdtemp(join(tmpdir(), 'mcp-tasks-state-')),
      MCP_TOKEN: '',
    };
    const refused = await runCli(['tools', '--json'], env);
    expect(refused.code).toBe(6);
    const login = await runCli(
      ['login', '--client-id', CLIENT.clientId, '--client-secret', CLIENT.clientSecret, '--json'],
      env,
    );
    expect(login.code).toBe(0);
    expect(JSON.parse(login.stdout)).toEqual({
      loggedIn: true,
      url: mcpUrl,
      issuer: idp.issuer,
      clientId: CLIENT.clientId,
      scope: SCOPE,
    });
    const store = new CredentialStore(configDir);
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);
    expect(await store.get(mcpUrl)).toMatchObject({
      grant: 'client_credentials',
      resource: mcpUrl,
      tokenEndpoint: idp.tokenEndpoint,
    });
    const tools = await runCli(['tools', '--json'], env);
    expect(tools.code).toBe(0);
    expect(tools.stdout).toContain('generate_report');
    const logout = await runCli(['logout'], env);
    expect(logout.stderr).toBe(`logged out of ${mcpUrl}\n`);
    expect(await store.get(mcpUrl)).toBeUndefined();
  });

  it('says which step failed for a wrong secret', async () => {
    const wrong = { ...CLIENT, clientSecret: 'wrong-secret-0123456789' };
    await expect(clientCredentials({ url: mcpUrl, ...wrong })({})).rejects.toThrow(
      `${idp.tokenEndpoint} refused the client credentials (invalid_client: client authentication failed)`,
    );
  });
});
