import {
  freePort,
  startAuthorizationServer,
  type AuthorizationServer,
  type AuthorizationServerClient,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createGatewayInfra,
  type GatewayInfra,
  type GatewayProcess,
} from './support/gateway-processes.js';
import { SMALL_REPORT, remote, rpc } from './support/rpc.js';

/**
 * Issue 34 item 5: real gateway processes behind a real authorization server (oidc-provider)
 * issuing RFC 9068 JWT access tokens by client credentials with a resource indicator. The gateway
 * knows only the issuer: its keys come from the issuer's OpenID discovery.
 */
const RESOURCE = 'https://tasks.example.com/mcp';
const OTHER_RESOURCE = 'https://billing.example.com/api';
const SCOPE = 'mcp:tasks';
const CLIENTS: AuthorizationServerClient[] = [
  { clientId: 'acme-ci', clientSecret: 'acme-ci-secret-0123456789', tenant: 'acme' },
  { clientId: 'globex-ci', clientSecret: 'globex-ci-secret-0123456789', tenant: 'globex' },
  {
    clientId: 'short',
    clientSecret: 'short-secret-0123456789',
    tenant: 'acme',
    accessTokenTtlS: 1,
  },
];
const METADATA_URL = 'https://tasks.example.com/.well-known/oauth-protected-resource/mcp';

let idp: AuthorizationServer;
let infra: GatewayInfra;
let gateway: GatewayProcess;
/** Trusts the provider's keys (MCP_JWKS_URL) but expects another issuer. */
let otherIssuer: GatewayProcess;
/** Its issuer is a closed port. */
let idpDown: GatewayProcess;
let closedIssuer: string;

beforeAll(async () => {
  idp = await startAuthorizationServer({
    resources: { [RESOURCE]: { scope: SCOPE }, [OTHER_RESOURCE]: { scope: SCOPE } },
    clients: CLIENTS,
    metadata: 'openid-only',
  });
  infra = await createGatewayInfra('gw_oauth_idp', {
    MCP_AUTH: 'jwt',
    MCP_JWT_ISSUER: idp.issuer,
    MCP_JWT_AUDIENCE: RESOURCE,
    MCP_JWT_REQUIRED_SCOPE: SCOPE,
    // Every unknown kid refetches at once, so the rotation test needs no waiting.
    MCP_JWKS_REFETCH_COOLDOWN_MS: '0',
  });
  closedIssuer = `http://127.0.0.1:${await freePort()}`;
  [gateway, otherIssuer, idpDown] = await Promise.all([
    infra.startGateway(),
    infra.startGateway({
      MCP_JWT_ISSUER: 'https://idp.example.com/',
      MCP_JWKS_URL: `${idp.issuer}/jwks`,
    }),
    infra.startGateway({ MCP_JWT_ISSUER: closedIssuer }),
  ]);
}, 60_000);

afterAll(async () => {
  await infra?.close();
  await idp?.close();
});

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
/** `scope: null` asks for no scope at all. */
const tokenFor = (clientId: string, resource = RESOURCE, scope: string | null = SCOPE) =>
  idp.clientCredentialsToken({ clientId, resource, ...(scope === null ? {} : { scope }) });

describe('a gateway that knows only its issuer', () => {
  it('is ready once it has the keys it discovered, and serves its metadata', async () => {
    const ready = await fetch(`${gateway.url}/readyz`);
    expect(await ready.json()).toMatchObject({
      status: 'ready',
      checks: { postgres: 'ok', redis: 'ok', identity_provider: 'ok' },
    });
    const metadata = await fetch(`${gateway.url}/.well-known/oauth-protected-resource/mcp`);
    expect(await metadata.json()).toEqual({
      resource: RESOURCE,
      authorization_servers: [idp.issuer],
      scopes_supported: [SCOPE],
      bearer_methods_supported: ['header'],
      resource_name: 'mcp-tasks',
    });
  });

  it('creates a task with a token for its audience, and the tenant comes from the claim', async () => {
    const acme = await tokenFor('acme-ci');
    const created = await rpc(remote(gateway.url), 'tools/call', SMALL_REPORT, bearer(acme));
    expect(created.status).toBe(200);
    const taskId = created.result.taskId as string;
    const own = await rpc(remote(gateway.url), 'tasks/get', { taskId }, bearer(acme));
    expect(own.result).toMatchObject({ taskId, status: 'working' });
    const rows = await infra.db
      .selectFrom('tasks')
      .select(['tenant', 'principal'])
      .where('id', '=', taskId)
      .execute();
    expect(rows).toEqual([{ tenant: 'acme', principal: 'acme-ci' }]);
    // Another tenant's token cannot see it: it answers exactly like a missing task.
    const globex = bearer(await tokenFor('globex-ci'));
    const foreign = await rpc(remote(gateway.url), 'tasks/get', { taskId }, globex);
    const missing = await rpc(
      remote(gateway.url),
      'tasks/get',
      { taskId: 'tsk_doesnotexistdoesnotexist' },
      globex,
    );
    expect(foreign.status).toBe(missing.status);
    expect(foreign.error).toEqual(missing.error);
  });

  it('answers 401 invalid_token to a token issued for another audience', async () => {
    const reply = await rpc(
      remote(gateway.url),
      'tools/list',
      {},
      bearer(await tokenFor('acme-ci', OTHER_RESOURCE)),
    );
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe(
      `Bearer realm="mcp", error="invalid_token", scope="${SCOPE}", resource_metadata="${METADATA_URL}"`,
    );
  });

  it('answers 403 insufficient_scope to a token granted no scope', async () => {
    const reply = await rpc(
      remote(gateway.url),
      'tools/list',
      {},
      bearer(await tokenFor('acme-ci', RESOURCE, null)),
    );
    expect(reply.status).toBe(403);
    expect(reply.headers.get('www-authenticate')).toBe(
      `Bearer realm="mcp", error="insufficient_scope", scope="${SCOPE}", resource_metadata="${METADATA_URL}"`,
    );
    expect(reply.error).toMatchObject({ code: -32600, data: { requiredScope: SCOPE } });
  });

  it('answers 401 invalid_token to an expired token', async () => {
    const token = await tokenFor('short');
    // The token lives 1 s; wait until it is past its exp (no clock tolerance is allowed).
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const reply = await rpc(remote(gateway.url), 'tools/list', {}, bearer(token));
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('picks up a key rotation without a restart, and still accepts tokens of the old key', async () => {
    const before = await tokenFor('acme-ci');
    await idp.rotateKeys();
    const after = await tokenFor('acme-ci');
    for (const token of [after, before]) {
      const reply = await rpc(remote(gateway.url), 'tools/list', {}, bearer(token));
      expect(reply.status).toBe(200);
    }
  });
});

describe('a gateway with MCP_JWKS_URL and another issuer', () => {
  it('refuses tokens whose iss is not MCP_JWT_ISSUER, though their keys verify', async () => {
    const reply = await rpc(
      remote(otherIssuer.url),
      'tools/list',
      {},
      bearer(await tokenFor('acme-ci')),
    );
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});

describe('a gateway whose identity provider is unreachable', () => {
  it('starts, fails /readyz naming the identity provider, and answers 503 instead of 401', async () => {
    const down = idpDown;
    const ready = await fetch(`${down.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({
      status: 'not_ready',
      checks: { postgres: 'ok', redis: 'ok', identity_provider: 'fail' },
    });
    const reply = await rpc(remote(down.url), 'tools/list', {}, bearer(await tokenFor('acme-ci')));
    expect(reply.status).toBe(503);
    expect(reply.headers.get('retry-after')).toBe('5');
    expect(reply.error).toEqual({
      code: -32603,
      message:
        "cannot verify the token now: the identity provider's keys are unreachable; retry in 5 s",
      data: { reason: 'identity_provider_unavailable', retryAfterMs: 5000 },
    });
    expect(down.process.output()).toContain(
      `identity provider unreachable, /readyz fails until it answers: cannot discover the keys of ${closedIssuer}`,
    );
    expect(down.process.child.exitCode).toBeNull();
  });
});
