import { describe, expect, it } from 'vitest';
import { DEV_REQUEST_STATE_SECRET, parseEnv } from './env.js';

const base = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
  REDIS_URL: 'redis://127.0.0.1:6379',
  MCP_AUTH: 'tokens',
  MCP_TOKENS: 'tok_aaaaaaaaaaaaaaaa:acme:alice',
  REQUEST_STATE_SECRET: 's'.repeat(32),
};

describe('parseEnv', () => {
  it('applies the documented defaults', () => {
    const result = parseEnv(base);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      maxBodyBytes: 1024 * 1024,
      pollRateLimit: false,
      taskTtlMs: 3_600_000,
      taskPollIntervalMs: 1000,
      allowedOrigins: undefined,
      toolPacks: undefined,
      migrateOnStart: false,
      auth: {
        mode: 'tokens',
        tokens: [{ token: 'tok_aaaaaaaaaaaaaaaa', tenant: 'acme', principal: 'alice' }],
      },
    });
  });

  it('reads MCP_TOOL_MODULES as a trimmed list, empty by default', () => {
    const unset = parseEnv(base);
    const set = parseEnv({ ...base, MCP_TOOL_MODULES: '@acme/mcp-tools, ./tools/index.js' });
    if (!unset.ok || !set.ok) throw new Error('expected a valid configuration');
    expect(unset.config.toolModules).toEqual([]);
    expect(set.config.toolModules).toEqual(['@acme/mcp-tools', './tools/index.js']);
  });

  it('keeps idle Postgres connections 10 minutes unless told otherwise, 0 for always', () => {
    const unset = parseEnv(base);
    const kept = parseEnv({ ...base, DATABASE_POOL_IDLE_TIMEOUT_MS: '0' });
    if (!unset.ok || !kept.ok) throw new Error('expected a valid configuration');
    expect(unset.config.databasePoolIdleTimeoutMs).toBe(600_000);
    expect(kept.config.databasePoolIdleTimeoutMs).toBe(0);
    expect(parseEnv({ ...base, DATABASE_POOL_IDLE_TIMEOUT_MS: '-1' })).toEqual({
      ok: false,
      problems: ['DATABASE_POOL_IDLE_TIMEOUT_MS: Too small: expected number to be >=0'],
    });
  });

  it('bounds the create queue by length and age, 2048 creates and 5 s unless told otherwise', () => {
    const unset = parseEnv(base);
    const set = parseEnv({
      ...base,
      MCP_CREATE_QUEUE_MAX: '100',
      MCP_CREATE_QUEUE_MAX_AGE_MS: '750',
    });
    if (!unset.ok || !set.ok) throw new Error('expected a valid configuration');
    expect(unset.config).toMatchObject({ createQueueMax: 2048, createQueueMaxAgeMs: 5000 });
    expect(set.config).toMatchObject({ createQueueMax: 100, createQueueMaxAgeMs: 750 });
    expect(parseEnv({ ...base, MCP_CREATE_QUEUE_MAX: '0' })).toEqual({
      ok: false,
      problems: ['MCP_CREATE_QUEUE_MAX: Too small: expected number to be >0'],
    });
  });

  it('lets a wake-up wait 1 ms for others to share its job unless told otherwise, 0 for none', () => {
    const unset = parseEnv(base);
    const none = parseEnv({ ...base, MCP_WAKE_UP_LINGER_MS: '0' });
    if (!unset.ok || !none.ok) throw new Error('expected a valid configuration');
    expect(unset.config.wakeUpLingerMs).toBe(1);
    expect(none.config.wakeUpLingerMs).toBe(0);
    expect(parseEnv({ ...base, MCP_WAKE_UP_LINGER_MS: '1.5' })).toEqual({
      ok: false,
      problems: ['MCP_WAKE_UP_LINGER_MS: Invalid input: expected int, received number'],
    });
    expect(parseEnv({ ...base, MCP_WAKE_UP_LINGER_MS: '5000' })).toEqual({
      ok: false,
      problems: ['MCP_WAKE_UP_LINGER_MS: Too big: expected number to be <=1000'],
    });
  });

  it("refuses the workers' ENQUEUE_GRACE_MS when it is shorter than this gateway's create window", () => {
    expect(parseEnv({ ...base, ENQUEUE_GRACE_MS: '11000' }).ok).toBe(true);
    expect(
      parseEnv({ ...base, ENQUEUE_GRACE_MS: '30000', MCP_VISIBILITY_TIMEOUT_MS: '20000' }),
    ).toEqual({
      ok: false,
      problems: [
        'ENQUEUE_GRACE_MS: 30000 ms is shorter than 2 × MCP_VISIBILITY_TIMEOUT_MS + 1000 = 41000 ms, so the sweeper could run a task whose client was told nothing will run; raise it or lower MCP_VISIBILITY_TIMEOUT_MS (give gateways and workers the same values)',
      ],
    });
  });

  it('limits each tenant by default (10,000 in flight, 100 creates a second, 200 at once); 0 turns a limit off', () => {
    const unset = parseEnv(base);
    const off = parseEnv({ ...base, TENANT_MAX_IN_FLIGHT: '0', TENANT_CREATE_RATE: '0' });
    if (!unset.ok || !off.ok) throw new Error('expected a valid configuration');
    expect(unset.config.tenantLimits).toEqual({
      maxInFlight: 10_000,
      createRatePerS: 100,
      createBurst: 200,
    });
    expect(off.config.tenantLimits).toMatchObject({ maxInFlight: 0, createRatePerS: 0 });
    expect(
      parseEnv({
        ...base,
        TENANT_MAX_IN_FLIGHT: '-1',
        TENANT_CREATE_RATE: 'fast',
        TENANT_CREATE_BURST: '0',
      }),
    ).toEqual({
      ok: false,
      problems: [
        'TENANT_MAX_IN_FLIGHT: Too small: expected number to be >=0',
        'TENANT_CREATE_RATE: Invalid input: expected number, received NaN',
        'TENANT_CREATE_BURST: Too small: expected number to be >0',
      ],
    });
  });

  it('fails when MCP_AUTH is missing: no auth mode is a default', () => {
    const { MCP_AUTH: _omit, ...rest } = base;
    const result = parseEnv(rest);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.some((p) => p.startsWith('MCP_AUTH'))).toBe(true);
  });

  it('lists every problem at once, field and cross-field checks together', () => {
    const result = parseEnv({
      MCP_AUTH: 'tokens',
      PORT: 'abc',
      MCP_POLL_RATE_LIMIT: 'maybe',
      MCP_TOOL_PACKS: 'reports,nope',
      MCP_ALLOWED_ORIGINS: 'bad',
    });
    expect(result).toEqual({
      ok: false,
      problems: [
        'DATABASE_URL: Invalid input: expected string, received undefined',
        'PORT: Invalid input: expected number, received NaN',
        'MCP_POLL_RATE_LIMIT: Invalid option: expected one of "on"|"off"',
        'REDIS_URL: required (or REDIS_CLUSTER_NODES, host:port,..., for a Redis Cluster)',
        'MCP_TOKENS: required when MCP_AUTH=tokens',
        'REQUEST_STATE_SECRET: required (at least 32 characters) unless MCP_AUTH=none',
        'MCP_ALLOWED_ORIGINS: "bad" is not an origin (scheme://host[:port])',
        'MCP_TOOL_PACKS: unknown pack(s) "nope"; valid packs: reports, conformance',
      ],
    });
  });

  it('reports cross-field problems together: tokens, secret length and origins', () => {
    const result = parseEnv({
      ...base,
      MCP_TOKENS: 'short:acme:alice,broken',
      REQUEST_STATE_SECRET: 'too-short',
      MCP_ALLOWED_ORIGINS: 'https://ok.example, not an origin',
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      'MCP_TOKENS: entry 1 token is shorter than 16 characters',
      'MCP_TOKENS: entry 2 must be token:tenant:principal',
      'REQUEST_STATE_SECRET: must be at least 32 characters',
      'MCP_ALLOWED_ORIGINS: "not an origin" is not an origin (scheme://host[:port])',
    ]);
  });

  it('reads REDIS_CLUSTER_NODES instead of REDIS_URL, and refuses both at once in one line', () => {
    const { REDIS_URL: _single, ...withoutUrl } = base;
    const clustered = parseEnv({
      ...withoutUrl,
      REDIS_CLUSTER_NODES: '10.0.0.1:7000,10.0.0.2:7000',
    });
    expect(clustered.ok && clustered.config.redis).toEqual({
      clusterNodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7000 },
      ],
    });
    expect(parseEnv({ ...base, REDIS_CLUSTER_NODES: '10.0.0.1:7000' })).toEqual({
      ok: false,
      problems: [
        'REDIS_URL / REDIS_CLUSTER_NODES: set one, not both (REDIS_URL for one Redis node, REDIS_CLUSTER_NODES for a Redis Cluster)',
      ],
    });
  });

  it('refuses the same token listed twice', () => {
    const result = parseEnv({
      ...base,
      MCP_TOKENS: 'tok_aaaaaaaaaaaaaaaa:acme:alice,tok_aaaaaaaaaaaaaaaa:globex:bob',
    });
    expect(result).toEqual({
      ok: false,
      problems: ['MCP_TOKENS: entry 2 repeats the token of entry 1'],
    });
  });

  it('requires REQUEST_STATE_SECRET unless MCP_AUTH=none, where a dev default is used', () => {
    const { REQUEST_STATE_SECRET: _omit, ...rest } = base;
    const strict = parseEnv(rest);
    expect(strict.ok).toBe(false);
    const relaxed = parseEnv({ ...rest, MCP_AUTH: 'none', MCP_TOKENS: undefined });
    if (!relaxed.ok) throw new Error(relaxed.problems.join('\n'));
    expect(relaxed.config.requestStateSecret).toBe(DEV_REQUEST_STATE_SECRET);
    expect(relaxed.config.requestStateSecretIsDevDefault).toBe(true);
    expect(relaxed.config.auth).toEqual({ mode: 'none' });
  });

  it('requires exactly one of MCP_JWT_SECRET and MCP_JWKS_URL for jwt', () => {
    const none = parseEnv({ ...base, MCP_AUTH: 'jwt' });
    expect(none.ok).toBe(false);
    const both = parseEnv({
      ...base,
      MCP_AUTH: 'jwt',
      MCP_JWT_SECRET: 'j'.repeat(32),
      MCP_JWKS_URL: 'https://issuer.example/jwks.json',
    });
    expect(both.ok).toBe(false);
    const ok = parseEnv({
      ...base,
      MCP_AUTH: 'jwt',
      MCP_JWT_SECRET: 'j'.repeat(32),
      MCP_JWT_TENANT_CLAIM: 'org',
      MCP_JWT_AUDIENCE: 'mcp-tasks',
    });
    if (!ok.ok) throw new Error(ok.problems.join('\n'));
    expect(ok.config.auth).toMatchObject({ mode: 'jwt', tenantClaim: 'org' });
  });

  it('treats empty variables as unset and parses lists', () => {
    const result = parseEnv({
      ...base,
      DATABASE_READ_URL: '',
      MCP_TOOL_PACKS: 'reports, conformance',
      MCP_ALLOWED_ORIGINS: '*',
      MCP_POLL_RATE_LIMIT: 'on',
    });
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.databaseReadUrls).toEqual([]);
    expect(result.config.toolPacks).toEqual(['reports', 'conformance']);
    expect(result.config.allowedOrigins).toBe('*');
    expect(result.config.pollRateLimit).toBe(true);
  });
});
