import { describe, expect, it } from 'vitest';
import { parseEnv } from './env.js';

/** Issue 11, item 7: MCP_AUTH=jwt without an audience accepted tokens meant for other APIs. */
const base = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
  REDIS_URL: 'redis://127.0.0.1:6379',
  MCP_AUTH: 'jwt',
  REQUEST_STATE_SECRET: 's'.repeat(32),
};
const withSecret = { ...base, MCP_JWT_SECRET: 'j'.repeat(32) };
const withJwks = {
  ...base,
  MCP_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
  MCP_JWT_ISSUER: 'https://idp.example.com/',
  MCP_JWT_AUDIENCE: 'https://mcp.example.com',
};

function problemsOf(env: Record<string, string | undefined>): string[] {
  const result = parseEnv(env);
  return result.ok ? [] : result.problems;
}

describe('parseEnv with MCP_AUTH=jwt', () => {
  it('requires MCP_JWT_AUDIENCE', () => {
    expect(problemsOf(withSecret)).toEqual([
      'MCP_JWT_AUDIENCE: required when MCP_AUTH=jwt (the "aud" this server accepts; without it tokens the identity provider issued for other APIs would be accepted)',
    ]);
  });

  it('requires MCP_JWT_ISSUER with MCP_JWKS_URL', () => {
    expect(problemsOf({ ...withJwks, MCP_JWT_ISSUER: undefined })).toEqual([
      'MCP_JWT_ISSUER: required with MCP_JWKS_URL (the "iss" of the identity provider whose keys the JWKS publishes)',
    ]);
  });

  it('refuses a plain-http MCP_JWKS_URL outside loopback, allows it on loopback', () => {
    expect(problemsOf({ ...withJwks, MCP_JWKS_URL: 'http://idp.example.com/jwks.json' })).toEqual([
      'MCP_JWKS_URL: must use https (plain http only for a loopback host: localhost, 127.0.0.0/8, [::1]); keys fetched over plain http can be replaced in transit',
    ]);
    for (const url of [
      'http://127.0.0.1:9000/jwks.json',
      'http://localhost:9000/jwks.json',
      'http://[::1]:9000/jwks.json',
    ]) {
      expect(problemsOf({ ...withJwks, MCP_JWKS_URL: url })).toEqual([]);
    }
  });

  it('lists every jwt problem at once', () => {
    expect(problemsOf({ ...base, MCP_JWKS_URL: 'http://idp.example.com/jwks.json' })).toEqual([
      'MCP_JWT_AUDIENCE: required when MCP_AUTH=jwt (the "aud" this server accepts; without it tokens the identity provider issued for other APIs would be accepted)',
      'MCP_JWT_ISSUER: required with MCP_JWKS_URL (the "iss" of the identity provider whose keys the JWKS publishes)',
      'MCP_JWKS_URL: must use https (plain http only for a loopback host: localhost, 127.0.0.0/8, [::1]); keys fetched over plain http can be replaced in transit',
    ]);
  });

  it('bounds token age (default 24 h) and passes typ through', () => {
    const result = parseEnv({ ...withJwks, MCP_JWT_TYP: 'at+jwt' });
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.auth).toEqual({
      mode: 'jwt',
      secret: undefined,
      jwksUrl: 'https://idp.example.com/.well-known/jwks.json',
      tenantClaim: 'tenant',
      issuer: 'https://idp.example.com/',
      audience: 'https://mcp.example.com',
      typ: 'at+jwt',
      maxTokenAgeSeconds: 86_400,
      requiredScopes: [],
      jwksRefetchCooldownMs: 30_000,
      resourceMetadata: {
        resource: 'https://mcp.example.com',
        authorizationServers: ['https://idp.example.com/'],
        scopesSupported: [],
      },
    });
    const custom = parseEnv({ ...withJwks, MCP_JWT_MAX_TOKEN_AGE_S: '600' });
    expect(custom.ok && custom.config.auth).toMatchObject({ maxTokenAgeSeconds: 600 });
    expect(problemsOf({ ...withJwks, MCP_JWT_MAX_TOKEN_AGE_S: '0' })).toEqual([
      'MCP_JWT_MAX_TOKEN_AGE_S: Too small: expected number to be >0',
    ]);
  });

  it('discovers the keys from MCP_JWT_ISSUER alone, which must then be https (or loopback http)', () => {
    const alone = { ...base, MCP_JWT_ISSUER: 'https://idp.example.com/', MCP_JWT_AUDIENCE: 'x' };
    const result = parseEnv(alone);
    expect(result.ok && result.config.auth).toMatchObject({
      secret: undefined,
      jwksUrl: undefined,
      issuer: 'https://idp.example.com/',
    });
    expect(problemsOf({ ...alone, MCP_JWT_ISSUER: 'http://idp.example.com/' })).toEqual([
      'MCP_JWT_ISSUER: must be an https URL (plain http only for a loopback host) to discover the keys from it; or set MCP_JWKS_URL',
    ]);
    expect(problemsOf({ ...alone, MCP_JWT_ISSUER: 'http://127.0.0.1:9000/' })).toEqual([]);
    expect(problemsOf({ ...alone, MCP_JWT_ISSUER: undefined })).toEqual([
      "MCP_JWT_ISSUER: required when MCP_AUTH=jwt without MCP_JWT_SECRET or MCP_JWKS_URL (the keys are discovered from the issuer's metadata)",
    ]);
  });

  it('refuses a secret and a JWKS URL together, and a non-URL resource or authorization server', () => {
    expect(problemsOf({ ...withJwks, MCP_JWT_SECRET: 'j'.repeat(32) })).toEqual([
      'MCP_JWT_SECRET / MCP_JWKS_URL: set one, not both',
    ]);
    expect(
      problemsOf({ ...withJwks, MCP_RESOURCE_URL: 'ftp://x/mcp', MCP_AUTHORIZATION_SERVERS: 'x' }),
    ).toEqual(['MCP_RESOURCE_URL: must be an http(s) URL (the public URL of /mcp)']);
    expect(
      problemsOf({ ...withJwks, MCP_AUTHORIZATION_SERVERS: 'idp, https://ok.example' }),
    ).toEqual(['MCP_AUTHORIZATION_SERVERS: "idp" is not an http(s) URL (an issuer)']);
  });

  it('splits MCP_JWT_REQUIRED_SCOPE on spaces: every scope listed is required', () => {
    const result = parseEnv({ ...withJwks, MCP_JWT_REQUIRED_SCOPE: ' mcp:tasks  tasks:write ' });
    expect(result.ok && result.config.auth).toMatchObject({
      requiredScopes: ['mcp:tasks', 'tasks:write'],
      resourceMetadata: { scopesSupported: ['mcp:tasks', 'tasks:write'] },
    });
  });
});
