import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createJwtAuthenticator } from './jwt.js';

const secret = 'j'.repeat(32);
const key = new TextEncoder().encode(secret);
const AUDIENCE = 'https://mcp.example.com';

async function sign(claims: Record<string, unknown>, header: Record<string, unknown> = {}) {
  return new SignJWT({ aud: AUDIENCE, ...claims })
    .setProtectedHeader({ alg: 'HS256', ...header })
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key);
}

const invalidToken = {
  status: 401,
  headers: { 'WWW-Authenticate': 'Bearer realm="mcp", error="invalid_token"' },
};

describe('jwt claims holding U+0000 (issue 11, item 8)', () => {
  const auth = createJwtAuthenticator({ secret, tenantClaim: 'tenant', audience: AUDIENCE });

  it('answers 401 invalid_token for a NUL in sub or in the tenant claim', async () => {
    await expect(
      auth.authenticate(`Bearer ${await sign({ sub: 'al\u0000ice', tenant: 'acme' })}`),
    ).rejects.toMatchObject(invalidToken);
    await expect(
      auth.authenticate(`Bearer ${await sign({ sub: 'alice', tenant: 'ac\u0000me' })}`),
    ).rejects.toMatchObject(invalidToken);
  });
});

describe('jwt hardening (issue 11, item 7)', () => {
  const auth = createJwtAuthenticator({ secret, tenantClaim: 'tenant', audience: AUDIENCE });
  const claims = { sub: 'alice', tenant: 'acme' };

  it('accepts an untyped token and the JWT / access-token types', async () => {
    for (const typ of [undefined, 'JWT', 'at+jwt', 'application/at+JWT']) {
      const header = typ === undefined ? {} : { typ };
      await expect(auth.authenticate(`Bearer ${await sign(claims, header)}`)).resolves.toEqual({
        tenant: 'acme',
        principal: 'alice',
      });
    }
  });

  it('refuses a token whose typ says it is something else (logout, DPoP proof, ...)', async () => {
    for (const typ of ['logout+jwt', 'dpop+jwt', 'secevent+jwt']) {
      await expect(
        auth.authenticate(`Bearer ${await sign(claims, { typ })}`),
      ).rejects.toMatchObject(invalidToken);
    }
  });

  it('requires the configured typ exactly when one is set', async () => {
    const typed = createJwtAuthenticator({
      secret,
      tenantClaim: 'tenant',
      audience: AUDIENCE,
      typ: 'at+jwt',
    });
    await expect(
      typed.authenticate(`Bearer ${await sign(claims, { typ: 'at+jwt' })}`),
    ).resolves.toMatchObject({ principal: 'alice' });
    await expect(
      typed.authenticate(`Bearer ${await sign(claims, { typ: 'JWT' })}`),
    ).rejects.toMatchObject(invalidToken);
  });

  it('refuses a token meant for another API (other or no audience)', async () => {
    await expect(
      auth.authenticate(`Bearer ${await sign({ ...claims, aud: 'https://other.example' })}`),
    ).rejects.toMatchObject(invalidToken);
    await expect(
      auth.authenticate(`Bearer ${await sign({ ...claims, aud: undefined })}`),
    ).rejects.toMatchObject(invalidToken);
  });

  it('refuses a token issued longer ago than maxTokenAge, or without iat', async () => {
    const bounded = createJwtAuthenticator({
      secret,
      tenantClaim: 'tenant',
      audience: AUDIENCE,
      maxTokenAgeSeconds: 3600,
    });
    const now = Math.floor(Date.now() / 1000);
    const old = await new SignJWT({ ...claims, aud: AUDIENCE })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt(now - 7200)
      .setExpirationTime(now + 300)
      .sign(key);
    await expect(bounded.authenticate(`Bearer ${old}`)).rejects.toMatchObject(invalidToken);
    const undated = await new SignJWT({ ...claims, aud: AUDIENCE })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(now + 300)
      .sign(key);
    await expect(bounded.authenticate(`Bearer ${undated}`)).rejects.toMatchObject(invalidToken);
    const fresh = await sign(claims);
    await expect(bounded.authenticate(`Bearer ${fresh}`)).resolves.toMatchObject({
      principal: 'alice',
    });
  });

  it('will not fetch keys over plain http from a non-loopback host', () => {
    expect(() =>
      createJwtAuthenticator({
        jwksUrl: 'http://idp.example.com/jwks.json',
        tenantClaim: 'tenant',
        audience: AUDIENCE,
        issuer: 'https://idp.example.com',
      }),
    ).toThrow('MCP_JWKS_URL must use https (plain http only for a loopback host)');
  });
});
