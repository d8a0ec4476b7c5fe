import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { createJwtAuthenticator } from './jwt.js';
import { createTokenAuthenticator } from './tokens.js';

const secret = 'j'.repeat(32);
const key = new TextEncoder().encode(secret);

async function sign(
  claims: Record<string, unknown>,
  /** `exp: null` signs a token that never expires. */
  options: { alg?: string; exp?: string | null; iss?: string } = {},
) {
  let jwt = new SignJWT({ aud: 'mcp-tasks', ...claims })
    .setProtectedHeader({ alg: options.alg ?? 'HS256' })
    .setIssuedAt();
  if (options.exp !== null) jwt = jwt.setExpirationTime(options.exp ?? '5m');
  if (options.iss) jwt = jwt.setIssuer(options.iss);
  return jwt.sign(key);
}

describe('token authentication', () => {
  const auth = createTokenAuthenticator([
    { token: 'tok_alice_aaaaaaaaaaaa', tenant: 'acme', principal: 'alice' },
    { token: 'tok_bob_bbbbbbbbbbbbbb', tenant: 'globex', principal: 'bob' },
  ]);

  it('maps a known token to its tenant and principal', async () => {
    await expect(auth.authenticate('Bearer tok_bob_bbbbbbbbbbbbbb')).resolves.toEqual({
      tenant: 'globex',
      principal: 'bob',
    });
  });

  it('answers 401 with a bare challenge without credentials and invalid_token for a bad one', async () => {
    await expect(auth.authenticate(null)).rejects.toMatchObject({
      status: 401,
      headers: { 'WWW-Authenticate': 'Bearer realm="mcp"' },
    });
    await expect(auth.authenticate('Basic dXNlcjpwYXNz')).rejects.toMatchObject({ status: 401 });
    await expect(auth.authenticate('Bearer tok_alice_aaaaaaaaaaaX')).rejects.toMatchObject({
      status: 401,
      headers: { 'WWW-Authenticate': 'Bearer realm="mcp", error="invalid_token"' },
    });
  });
});

describe('token authentication, repeated', () => {
  it('answers every later request of a known token the same, and still refuses its near misses', async () => {
    const auth = createTokenAuthenticator([
      { token: 'tok_alice_aaaaaaaaaaaa', tenant: 'acme', principal: 'alice' },
      { token: 'tok_bob_bbbbbbbbbbbbbb', tenant: 'globex', principal: 'bob' },
    ]);
    for (let i = 0; i < 3; i++) {
      const alice = await auth.authenticate('Bearer tok_alice_aaaaaaaaaaaa');
      expect(alice).toEqual({ tenant: 'acme', principal: 'alice' });
      // A caller that changes its identity object changes nothing for the next request.
      alice.tenant = 'globex';
      await expect(auth.authenticate('bearer  tok_bob_bbbbbbbbbbbbbb ')).resolves.toEqual({
        tenant: 'globex',
        principal: 'bob',
      });
      await expect(auth.authenticate('Bearer tok_alice_aaaaaaaaaaaa_')).rejects.toMatchObject({
        status: 401,
        headers: { 'WWW-Authenticate': 'Bearer realm="mcp", error="invalid_token"' },
      });
      await expect(auth.authenticate('Basic tok_alice_aaaaaaaaaaaa')).rejects.toMatchObject({
        status: 401,
        headers: { 'WWW-Authenticate': 'Bearer realm="mcp"' },
      });
    }
  });
});

describe('jwt authentication', () => {
  const auth = createJwtAuthenticator({
    secret,
    tenantClaim: 'org',
    issuer: 'https://issuer.example',
    audience: 'mcp-tasks',
  });

  it('takes the principal from sub and the tenant from the configured claim', async () => {
    const token = await sign(
      { sub: 'alice', org: 'acme' },
      { exp: '5m', iss: 'https://issuer.example' },
    );
    await expect(auth.authenticate(`Bearer ${token}`)).resolves.toEqual({
      tenant: 'acme',
      principal: 'alice',
    });
  });

  it('rejects a token without the tenant claim, from another issuer, or expired', async () => {
    const noTenant = await sign({ sub: 'alice' }, { iss: 'https://issuer.example' });
    const otherIssuer = await sign({ sub: 'alice', org: 'acme' }, { iss: 'https://evil.example' });
    const expired = await sign(
      { sub: 'alice', org: 'acme' },
      { iss: 'https://issuer.example', exp: '-1m' },
    );
    for (const token of [noTenant, otherIssuer, expired, 'not-a-jwt']) {
      await expect(auth.authenticate(`Bearer ${token}`)).rejects.toMatchObject({ status: 401 });
    }
  });

  it('rejects a token without exp, which would otherwise be valid forever', async () => {
    const forever = await sign(
      { sub: 'alice', org: 'acme' },
      { iss: 'https://issuer.example', exp: null },
    );
    await expect(auth.authenticate(`Bearer ${forever}`)).rejects.toMatchObject({
      status: 401,
      code: -32600,
      message: 'Unauthorized: invalid bearer token',
      headers: { 'WWW-Authenticate': 'Bearer realm="mcp", error="invalid_token"' },
    });
  });

  it('refuses an algorithm other than HS256 for a shared secret', async () => {
    const token = await new SignJWT({ sub: 'alice', org: 'acme' })
      .setProtectedHeader({ alg: 'HS512' })
      .setIssuer('https://issuer.example')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('k'.repeat(64)));
    await expect(auth.authenticate(`Bearer ${token}`)).rejects.toMatchObject({ status: 401 });
  });
});

describe('jwt authentication with a JWKS URL', () => {
  it('verifies tokens signed by a key the JWKS publishes and rejects others', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const stranger = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const server = createServer((_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const auth = createJwtAuthenticator({
        jwksUrl: `http://127.0.0.1:${port}/jwks.json`,
        tenantClaim: 'tenant',
        audience: 'mcp-tasks',
        issuer: 'https://issuer.example',
      });
      const claims = { sub: 'alice', tenant: 'acme' };
      const good = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer('https://issuer.example')
        .setAudience('mcp-tasks')
        .setExpirationTime('5m')
        .sign(privateKey);
      await expect(auth.authenticate(`Bearer ${good}`)).resolves.toEqual({
        tenant: 'acme',
        principal: 'alice',
      });
      const forged = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer('https://issuer.example')
        .setAudience('mcp-tasks')
        .setExpirationTime('5m')
        .sign(stranger.privateKey);
      await expect(auth.authenticate(`Bearer ${forged}`)).rejects.toMatchObject({ status: 401 });
      const wrongAudience = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer('https://issuer.example')
        .setAudience('other')
        .setExpirationTime('5m')
        .sign(privateKey);
      await expect(auth.authenticate(`Bearer ${wrongAudience}`)).rejects.toMatchObject({
        status: 401,
      });
    } finally {
      server.close();
    }
  });
});
