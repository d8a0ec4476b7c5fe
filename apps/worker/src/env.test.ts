import { describe, expect, it } from 'vitest';
import { EnvError, parseEnv } from './env.js';

const required = { DATABASE_URL: 'postgres://u@h:5432/db', REDIS_URL: 'redis://h:6379' };

describe('parseEnv', () => {
  it('applies the documented defaults', () => {
    const config = parseEnv(required);
    expect(config).toMatchObject({
      concurrency: 8,
      leaseMs: 30_000,
      sweepIntervalMs: 5_000,
      sweepLeaderTimeoutMs: 60_000,
      wakeUpGraceMs: 30_000,
      retry: { maxAttempts: 3 },
      reportStepMs: 500,
      toolPacks: ['reports', 'conformance'],
      metricsPort: 9464,
      logLevel: 'info',
      shutdownGraceMs: 10_000,
      stepLog: false,
    });
    expect(config.redisPrefix).toBeUndefined();
    expect(config.workerId).toMatch(new RegExp(`-${process.pid}$`));
  });

  it('reads tool modules as a trimmed list (none by default) and the tool-missing bound', () => {
    expect(parseEnv(required)).toMatchObject({
      toolModules: [],
      toolMissingFailAfterMs: 300_000,
    });
    expect(
      parseEnv({
        ...required,
        MCP_TOOL_MODULES: ' @acme/mcp-tools, ./tools/index.js ,',
        TOOL_MISSING_FAIL_AFTER_MS: '1500',
      }),
    ).toMatchObject({
      toolModules: ['@acme/mcp-tools', './tools/index.js'],
      toolMissingFailAfterMs: 1_500,
    });
  });

  it('caps the retry delays to the enqueue grace, so the sweeper never cuts a backoff short', () => {
    expect(parseEnv(required)).toMatchObject({
      retry: { baseDelayMs: 250, maxDelayMs: 10_000 },
    });
    expect(
      parseEnv({
        ...required,
        LEASE_MS: '2000',
        MCP_VISIBILITY_TIMEOUT_MS: '500',
        RETRY_BASE_DELAY_MS: '4000',
      }),
    ).toMatchObject({
      wakeUpGraceMs: 2_000,
      retry: { baseDelayMs: 2_000, maxDelayMs: 2_000 },
    });
  });

  it('parses numbers, pack lists and treats empty strings as unset', () => {
    const config = parseEnv({
      ...required,
      LEASE_MS: '2000',
      MCP_VISIBILITY_TIMEOUT_MS: '500',
      MCP_TOOL_PACKS: ' reports ',
      METRICS_PORT: '0',
      REDIS_PREFIX: '',
    });
    expect(config).toMatchObject({
      leaseMs: 2_000,
      wakeUpGraceMs: 2_000,
      toolPacks: ['reports'],
    });
    expect(config.metricsPort).toBe(0);
    expect(config.redisPrefix).toBeUndefined();
  });

  it("keeps the enqueue grace above the gateways' create window: raised by default, refused when set", () => {
    // 2 × MCP_VISIBILITY_TIMEOUT_MS (5000 by default, as in the gateway) + 1000.
    expect(parseEnv({ ...required, LEASE_MS: '2000' }).wakeUpGraceMs).toBe(11_000);
    expect(
      parseEnv({ ...required, LEASE_MS: '2000', MCP_VISIBILITY_TIMEOUT_MS: '200' }).wakeUpGraceMs,
    ).toBe(2_000);
    expect(parseEnv({ ...required, ENQUEUE_GRACE_MS: '11000' }).wakeUpGraceMs).toBe(11_000);
    expect(() => parseEnv({ ...required, ENQUEUE_GRACE_MS: '5000' })).toThrow(
      new EnvError([
        'ENQUEUE_GRACE_MS: 5000 ms is shorter than 2 × MCP_VISIBILITY_TIMEOUT_MS + 1000 = 11000 ms, so the sweeper could run a task whose client was told nothing will run; raise it or lower MCP_VISIBILITY_TIMEOUT_MS (give gateways and workers the same values)',
      ]),
    );
  });

  it('keeps idle Postgres connections 10 minutes unless told otherwise, 0 for always', () => {
    expect(parseEnv(required).databasePoolIdleTimeoutMs).toBe(600_000);
    expect(
      parseEnv({ ...required, DATABASE_POOL_IDLE_TIMEOUT_MS: '0' }).databasePoolIdleTimeoutMs,
    ).toBe(0);
    expect(() => parseEnv({ ...required, DATABASE_POOL_IDLE_TIMEOUT_MS: '-1' })).toThrow(
      /DATABASE_POOL_IDLE_TIMEOUT_MS/,
    );
  });

  it('hands the app camelCase settings only, STEP_LOG as a flag', () => {
    const config = parseEnv({ ...required, STEP_LOG: 'on' });
    expect(config.stepLog).toBe(true);
    expect(Object.keys(config).filter((key) => /^[A-Z_]+$/.test(key))).toEqual([]);
  });

  it('reads REDIS_CLUSTER_NODES instead of REDIS_URL, and refuses both or neither in one line', () => {
    const config = parseEnv({
      DATABASE_URL: required.DATABASE_URL,
      REDIS_CLUSTER_NODES: 'r1:7000',
    });
    expect(config.redis).toEqual({ clusterNodes: [{ host: 'r1', port: 7000 }] });
    expect(() => parseEnv({ ...required, REDIS_CLUSTER_NODES: 'r1:7000' })).toThrow(
      new EnvError([
        'REDIS_URL / REDIS_CLUSTER_NODES: set one, not both (REDIS_URL for one Redis node, REDIS_CLUSTER_NODES for a Redis Cluster)',
      ]),
    );
    expect(() => parseEnv({ DATABASE_URL: required.DATABASE_URL })).toThrow(
      new EnvError([
        'REDIS_URL: required (or REDIS_CLUSTER_NODES, host:port,..., for a Redis Cluster)',
      ]),
    );
  });

  it('lists every problem at once', () => {
    let caught: unknown;
    try {
      parseEnv({
        REDIS_URL: 'http://nope',
        WORKER_CONCURRENCY: '0',
        MCP_TOOL_PACKS: 'reports,games',
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EnvError);
    const problems = (caught as EnvError).problems.join('\n');
    expect(problems).toMatch(/DATABASE_URL/);
    expect(problems).toMatch(/REDIS_URL/);
    expect(problems).toMatch(/WORKER_CONCURRENCY/);
    expect(problems).toMatch(/MCP_TOOL_PACKS/);
  });

  it('refuses a sweeper leader timeout a sweep could outlast, and takes 0 for none', () => {
    expect(() =>
      parseEnv({ ...required, SWEEP_STEP_BUDGET_MS: '2000', SWEEP_LEADER_TIMEOUT_MS: '6000' }),
    ).toThrow(
      new EnvError([
        'SWEEP_LEADER_TIMEOUT_MS: 6000 ms is not longer than a sweep may take (3 × SWEEP_STEP_BUDGET_MS = 6000 ms), so a busy leader would lose its lock mid-sweep; raise it, or set 0 for no bound',
      ]),
    );
    expect(
      parseEnv({ ...required, SWEEP_STEP_BUDGET_MS: '2000', SWEEP_LEADER_TIMEOUT_MS: '6001' })
        .sweepLeaderTimeoutMs,
    ).toBe(6001);
    expect(parseEnv({ ...required, SWEEP_LEADER_TIMEOUT_MS: '0' }).sweepLeaderTimeoutMs).toBe(0);
  });
});

describe('parseEnv: the database settings', () => {
  it('sends the session work to DATABASE_DIRECT_URL behind a transaction pooler', () => {
    expect(
      parseEnv({
        ...required,
        DATABASE_POOLER: 'transaction',
        DATABASE_DIRECT_URL: 'postgres://u@direct:5432/db',
      }).database,
    ).toEqual({
      url: 'postgres://u@h:5432/db',
      directUrl: 'postgres://u@direct:5432/db',
      pooler: 'transaction',
      preparedStatements: false,
    });
  });

  it('refuses a transaction pooler without a direct URL, in one line', () => {
    expect(() => parseEnv({ ...required, DATABASE_POOLER: 'transaction' })).toThrow(
      new EnvError([
        'DATABASE_DIRECT_URL: required with DATABASE_POOLER=transaction (LISTEN, the sweeper lock and migrations need a session: point it at Postgres itself or a session-mode pool)',
      ]),
    );
  });
});
