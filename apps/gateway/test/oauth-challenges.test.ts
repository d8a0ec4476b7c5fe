import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createAuthenticator } from '../src/auth/index.js';
import { parseEnv, type GatewayConfig } from '../src/env.js';
import { useGatewayUnderTest } from './support/harness.js';
import { rpc } from './support/rpc.js';

// Issue 34 items 1–2: what a stock MCP client reads to find where to log in (RFC 9728 metadata,
// the challenge of a 401) and the 403 of a token without the required scope.

const SECRET = 'oauth-challenges-secret-0123456789abcdef';
const ISSUER = 'https://idp.example.com/realms/acme';
const RESOURCE = 'https://tasks.example.com/mcp';

function configFrom(env: Record<string, string>): GatewayConfig {
  const parsed = parseEnv({
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
    REDIS_URL: 'redis://127.0.0.1:6379',
    REQUEST_STATE_SECRET: 's'.repeat(32),
    MCP_AUTH: 'jwt',
    MCP_JWT_SECRET: SECRET,
    MCP_JWT_ISSUER: ISSUER,
    MCP_JWT_AUDIENCE: RESOURCE,
    ...env,
  });
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.config;
}

const config = configFrom({ MCP_JWT_REQUIRED_SCOPE: 'mcp:tasks' });
const auth = config.auth.mode === 'jwt' ? config.auth : undefined;

const { gw } = useGatewayUnderTest('gw_oauth_challenges', () => ({
  auth: createAuthenticator(config.auth),
  resourceMetadata: auth?.resourceMetadata,
}));

async function token(claims: Record<string, unknown>, audience = RESOURCE): Promise<string> {
  return new SignJWT({ sub: 'alice', tenant: 'acme', ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));
}

const METADATA = {
  resource: RESOURCE,
  authorization_servers: [ISSUER],
  scopes_supported: ['mcp:tasks'],
  bearer_methods_supported: ['header'],
  resource_name: 'mcp-tasks',
};
const METADATA_URL = 'https://tasks.example.com/.well-known/oauth-protected-resource/mcp';

describe('OAuth Protected Resource Metadata (RFC 9728)', () => {
  it('is served at the path-suffixed and the root well-known URL, naming the public resource', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const response = await gw.app.request(path);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(await response.json()).toEqual(METADATA);
    }
  });

  it('names MCP_RESOURCE_URL and MCP_AUTHORIZATION_SERVERS when set, and omits scopes when none is required', () => {
    const custom = configFrom({
      MCP_JWT_AUDIENCE: 'api://mcp-tasks',
      MCP_RESOURCE_URL: 'https://gw.example.com/tools/mcp',
      MCP_AUTHORIZATION_SERVERS: 'https://a.example.com, https://b.example.com',
    });
    expect(custom.auth).toMatchObject({
      requiredScopes: [],
      resourceMetadata: {
        resource: 'https://gw.example.com/tools/mcp',
        authorizationServers: ['https://a.example.com', 'https://b.example.com'],
        scopesSupported: [],
      },
    });
  });

  it('is absent when the audience is not a URL and no MCP_RESOURCE_URL names one', () => {
    expect(configFrom({ MCP_JWT_AUDIENCE: 'mcp-tasks' }).auth).toMatchObject({
      resourceMetadata: undefined,
    });
  });
});

describe('challenges', () => {
  it('answers a request without a token 401 naming the metadata and the scope', async () => {
    const reply = await rpc(gw.app, 'tools/list', {}, { as: null });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe(
      `Bearer realm="mcp", scope="mcp:tasks", resource_metadata="${METADATA_URL}"`,
    );
  });

  it('answers a bad token 401 invalid_token, still naming the metadata', async () => {
    const reply = await rpc(
      gw.app,
      'tools/list',
      {},
      {
        headers: {
          authorization: `Bearer ${await token({ scope: 'mcp:tasks' }, 'https://other.example.com/mcp')}`,
        },
      },
    );
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe(
      `Bearer realm="mcp", error="invalid_token", scope="mcp:tasks", resource_metadata="${METADATA_URL}"`,
    );
  });

  it('answers a valid token without the required scope 403 insufficient_scope with a JSON-RPC error', async () => {
    for (const claims of [{}, { scope: 'openid profile' }, { scp: ['mcp:read'] }]) {
      const reply = await rpc(
        gw.app,
        'tools/list',
        {},
        { headers: { authorization: `Bearer ${await token(claims)}` } },
      );
      expect(reply.status).toBe(403);
      expect(reply.headers.get('www-authenticate')).toBe(
        `Bearer realm="mcp", error="insufficient_scope", scope="mcp:tasks", resource_metadata="${METADATA_URL}"`,
      );
      expect(reply.body).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message:
            'Forbidden: the token was not granted the scope "mcp:tasks"; ask the authorization server for a token with scope="mcp:tasks"',
          data: { requiredScope: 'mcp:tasks' },
        },
      });
    }
  });

  it('accepts the scope from `scope` (RFC 9068) or `scp` as a string or a list', async () => {
    for (const claims of [
      { scope: 'openid mcp:tasks' },
      { scp: 'mcp:tasks offline_access' },
      { scp: ['mcp:tasks'] },
    ]) {
      const reply = await rpc(
        gw.app,
        'tools/list',
        {},
        { headers: { authorization: `Bearer ${await token(claims)}` } },
      );
      expect(reply.status).toBe(200);
    }
  });
});
