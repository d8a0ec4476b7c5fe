import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { IdentityProviderUnavailableError, createKeySource, discoveryUrls } from './issuer-keys.js';
import { resourceMetadataPaths, resourceMetadataUrl } from './resource-metadata.js';

/** An identity provider's well-known documents, served over real HTTP from a path → body table. */
async function serve(routes: (base: string) => Record<string, unknown>): Promise<string> {
  let table: Record<string, unknown> = {};
  const server = createServer((req, res) => {
    const body = table[req.url ?? ''];
    requested.push(req.url ?? '');
    res.statusCode = body === undefined ? 404 : 200;
    res.setHeader('content-type', 'application/json');
    res.end(body === undefined ? '{}' : JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  table = routes(base);
  return base;
}
let servers: Server[] = [];
let requested: string[] = [];
afterEach(() => {
  for (const server of servers) server.close();
  servers = [];
  requested = [];
});

describe('where an issuer publishes its metadata', () => {
  it('tries RFC 8414 with the path inserted, then OpenID inserted, then OpenID appended', () => {
    expect(discoveryUrls('https://idp.example.com/realms/acme')).toEqual([
      'https://idp.example.com/.well-known/oauth-authorization-server/realms/acme',
      'https://idp.example.com/.well-known/openid-configuration/realms/acme',
      'https://idp.example.com/realms/acme/.well-known/openid-configuration',
    ]);
    expect(discoveryUrls('https://tenant.auth0.com/')).toEqual([
      'https://tenant.auth0.com/.well-known/oauth-authorization-server',
      'https://tenant.auth0.com/.well-known/openid-configuration',
    ]);
  });

  it('puts the resource metadata between the host and the resource path (RFC 9728 §3.1)', () => {
    expect(resourceMetadataUrl('https://gw.example.com/tools/mcp')).toBe(
      'https://gw.example.com/.well-known/oauth-protected-resource/tools/mcp',
    );
    expect(resourceMetadataUrl('https://gw.example.com')).toBe(
      'https://gw.example.com/.well-known/oauth-protected-resource',
    );
    expect(resourceMetadataPaths('https://gw.example.com/tools/mcp')).toEqual([
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource/tools/mcp',
    ]);
  });
});

describe('keys discovered from the issuer', () => {
  it('takes jwks_uri from RFC 8414 metadata first and verifies with those keys', async () => {
    const { publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    const base = await serve((origin) => ({
      '/.well-known/oauth-authorization-server/idp': {
        issuer: `${origin}/idp`,
        jwks_uri: `${origin}/keys`,
      },
      '/keys': { keys: [jwk] },
    }));
    const source = createKeySource({ issuer: `${base}/idp`, refetchCooldownMs: 0 });
    await source.check();
    // getKey picks by the protected header alone; the token's payload is not read.
    await expect(
      source.getKey({ alg: 'ES256', kid: 'k1' }, { payload: '', signature: '' }),
    ).resolves.toBeDefined();
    expect(requested).toEqual(['/.well-known/oauth-authorization-server/idp', '/keys']);
  });

  it('refuses metadata that names another issuer, saying what to fix', async () => {
    const base = await serve(() => ({
      '/.well-known/oauth-authorization-server': {
        issuer: 'https://elsewhere.example.com',
        jwks_uri: 'https://elsewhere.example.com/keys',
      },
    }));
    await expect(createKeySource({ issuer: base, refetchCooldownMs: 0 }).check()).rejects.toThrow(
      new IdentityProviderUnavailableError(
        `${base}/.well-known/oauth-authorization-server names the issuer "https://elsewhere.example.com", not MCP_JWT_ISSUER=${base}; set MCP_JWT_ISSUER to the exact "iss" of the tokens`,
      ),
    );
  });

  it('refuses a jwks_uri over plain http to a remote host', async () => {
    const base = await serve((origin) => ({
      '/.well-known/openid-configuration': { issuer: origin, jwks_uri: 'http://idp.example.com/k' },
    }));
    await expect(createKeySource({ issuer: base, refetchCooldownMs: 0 }).check()).rejects.toThrow(
      `${base}/.well-known/openid-configuration has no usable jwks_uri ("http://idp.example.com/k": an https URL is required); set MCP_JWKS_URL`,
    );
  });

  it('does not ask an unreachable provider again within the retry interval', async () => {
    const base = await serve(() => ({}));
    const source = createKeySource({
      issuer: base,
      refetchCooldownMs: 0,
      retryDiscoveryAfterMs: 60_000,
    });
    await expect(source.check()).rejects.toBeInstanceOf(IdentityProviderUnavailableError);
    const asked = requested.length;
    await expect(source.check()).rejects.toBeInstanceOf(IdentityProviderUnavailableError);
    expect(requested.length).toBe(asked);
  });
});
