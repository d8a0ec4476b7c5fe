import type { AuthorizationServer } from '@mcp-tasks/testing';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCredentials } from '../src/index.js';
import { CredentialStore } from '../src/node/index.js';
import { runCli, startCli, until } from './support/cli.js';
import { SCOPE, startOAuthGateway, type OAuthGateway } from './support/oauth-gateway.js';

/**
 * Issue 34: `mcp-tasks login` against a real authorization server, with client credentials and
 * through the browser (the test plays the browser), then commands that use the stored login.
 */
const CLIENT = { clientId: 'cli-ci', clientSecret: 'cli-ci-secret-0123456789', tenant: 'acme' };
const LABEL = 'client_oauth_cli';
const OPTIONS = { clients: [CLIENT], accounts: { alice: 'acme' } };

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

  it('logs in through the browser (authorization code + PKCE, dynamic registration, loopback redirect) and refreshes the token', async () => {
    const configDir = await mkdtemp(join(tmpdir(), 'mcp-tasks-config-'));
    const env = {
      MCP_URL: mcpUrl,
      MCP_TASKS_CONFIG_DIR: configDir,
      MCP_TASKS_STATE_DIR: await mkdtemp(join(tmpdir(), 'mcp-tasks-state-')),
      MCP_TOKEN: '',
      MCP_CLIENT_ID: '',
      MCP_CLIENT_SECRET: '',
    };
    const login = startCli(['login'], env);
    await until(
      () => login.stderr().includes('open this URL'),
      () => login.stderr(),
    );
    const authorizationUrl = /\n {2}(\S+)\n/.exec(login.stderr())?.[1] ?? '';
    expect(new URL(authorizationUrl).searchParams.get('code_challenge_method')).toBe('S256');
    expect(new URL(authorizationUrl).searchParams.get('resource')).toBe(mcpUrl);
    // The test is the user's browser: log in as alice, consent, follow the redirect home.
    const callback = await idp.approve(authorizationUrl, 'alice');
    expect(callback).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/);
    expect((await fetch(callback)).status).toBe(200);
    expect(await login.exited).toBe(0);
    const store = new CredentialStore(configDir);
    const stored = await store.get(mcpUrl);
    expect(stored).toMatchObject({ grant: 'authorization_code', resource: mcpUrl });
    expect(stored?.refreshToken).toBeTypeOf('string');
    const claims = JSON.parse(
      Buffer.from(stored?.accessToken?.split('.')[1] ?? '', 'base64url').toString(),
    ) as Record<string, unknown>;
    expect(claims).toMatchObject({ sub: 'alice', tenant: 'acme', aud: mcpUrl });
    // The stored token has expired: the next command refreshes it with the refresh token.
    await store.save({ ...stored!, expiresAt: Date.now() - 1000 });
    const tools = await runCli(['tools', '--json'], env);
    expect(tools.code).toBe(0);
    expect(tools.stdout).toContain('generate_report');
    expect((await store.get(mcpUrl))?.accessToken).not.toBe(stored?.accessToken);
  });
});
