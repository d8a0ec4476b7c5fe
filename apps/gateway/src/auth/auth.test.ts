import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createJwtAuthenticator } from './jwt.js';
import { createTokenAuthenticator } from './tokens.js';

const secret = 'j'.repeat(32);
const key = new TextEncoder().encode(secret);

async function sign(
  claims: Record<string, unknown>,
  options: { alg?: string; exp?: string; iss?: string } = {},
) {
  let jwt = new SignJWT(claims).setProtectedHeader({ alg: options.alg ?? 'HS256' }).setIssuedAt();
  if (options.exp) jwt = jwt.setExpirationTime(options.exp);
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

describe('jwt authentication', () => {
  const auth = createJwtAuthenticator({
    secret,
    tenantClaim: 'org',
    issuer: 'https://issuer.example',
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

  it('refuses an algorithm other than HS256 for a shared secret', async () => {
    const token = await new SignJWT({ sub: 'alice', org: 'acme' })
      .setProtectedHeader({ alg: 'HS512' })
      .setIssuer('https://issuer.example')
      .sign(new TextEncoder().encode('k'.repeat(64)));
    await expect(auth.authenticate(`Bearer ${token}`)).rejects.toMatchObject({ status: 401 });
  });
});
