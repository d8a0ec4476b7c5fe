import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthorizationServer, type AuthorizationServer } from './authorization-server.js';

const RESOURCE = 'https://tasks.example.com/mcp';
let server: AuthorizationServer;
beforeAll(async () => {
  server = await startAuthorizationServer({
    resources: { [RESOURCE]: { scope: 'mcp:tasks' } },
    clients: [{ clientId: 'ci', clientSecret: 'ci-secret-0123456789', tenant: 'acme' }],
    metadata: 'openid-only',
  });
});
afterAll(async () => {
  await server?.close();
});

describe('the test authorization server', () => {
  it('issues an RFC 9068 JWT access token for a resource indicator, with the tenant claim', async () => {
    const token = await server.clientCredentialsToken({
      clientId: 'ci',
      resource: RESOURCE,
      scope: 'mcp:tasks',
    });
    expect(decodeProtectedHeader(token)).toMatchObject({
      alg: 'RS256',
      typ: 'at+jwt',
      kid: server.currentKid(),
    });
    expect(decodeJwt(token)).toMatchObject({
      iss: server.issuer,
      aud: RESOURCE,
      sub: 'ci',
      client_id: 'ci',
      scope: 'mcp:tasks',
      tenant: 'acme',
    });
  });

  it('publishes OpenID discovery (RFC 8414 metadata hidden when asked), and signs with a new key after a rotation', async () => {
    const openid = await fetch(`${server.issuer}/.well-known/openid-configuration`);
    expect(await openid.json()).toMatchObject({ issuer: server.issuer });
    expect((await fetch(`${server.issuer}/.well-known/oauth-authorization-server`)).status).toBe(
      404,
    );
    const before = server.currentKid();
    await server.rotateKeys();
    expect(server.currentKid()).not.toBe(before);
    const token = await server.clientCredentialsToken({ clientId: 'ci', resource: RESOURCE });
    expect(decodeProtectedHeader(token).kid).toBe(server.currentKid());
  });
});
