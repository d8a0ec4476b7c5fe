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
