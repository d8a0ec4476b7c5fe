import { describe, expect, it } from 'vitest';
import { EnvError, parseEnv } from './env.js';

const required = { DATABASE_URL: 'postgres://u@h:5432/db', REDIS_URL: 'redis://h:6379' };

describe('parseEnv', () => {
  it('applies the documented defaults', () => {
    const env = parseEnv(required);
    expect(env).toMatchObject({
      WORKER_CONCURRENCY: 8,
      LEASE_MS: 30_000,
      SWEEP_INTERVAL_MS: 5_000,
      ENQUEUE_GRACE_MS: 30_000,
      MAX_ATTEMPTS: 3,
      REPORT_STEP_MS: 500,
      MCP_TOOL_PACKS: ['reports', 'conformance'],
      METRICS_PORT: 9464,
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_MS: 10_000,
      STEP_LOG: 'off',
    });
    expect(env.REDIS_PREFIX).toBeUndefined();
    expect(env.WORKER_ID).toMatch(new RegExp(`-${process.pid}$`));
  });

  it('reads tool modules as a trimmed list (none by default) and the tool-missing bound', () => {
    expect(parseEnv(required)).toMatchObject({
      MCP_TOOL_MODULES: [],
      TOOL_MISSING_FAIL_AFTER_MS: 300_000,
    });
    expect(
      parseEnv({
        ...required,
        MCP_TOOL_MODULES: ' @acme/mcp-tools, ./tools/index.js ,',
        TOOL_MISSING_FAIL_AFTER_MS: '1500',
      }),
    ).toMatchObject({
      MCP_TOOL_MODULES: ['@acme/mcp-tools', './tools/index.js'],
      TOOL_MISSING_FAIL_AFTER_MS: 1_500,
    });
  });

  it('caps the retry delays to the enqueue grace, so the sweeper never cuts a backoff short', () => {
    expect(parseEnv(required)).toMatchObject({
      RETRY_BASE_DELAY_MS: 250,
      RETRY_MAX_DELAY_MS: 10_000,
    });
    expect(parseEnv({ ...required, LEASE_MS: '2000', RETRY_BASE_DELAY_MS: '4000' })).toMatchObject({
      ENQUEUE_GRACE_MS: 2_000,
      RETRY_BASE_DELAY_MS: 2_000,
      RETRY_MAX_DELAY_MS: 2_000,
    });
  });

  it('parses numbers, pack lists and treats empty strings as unset', () => {
    const env = parseEnv({
      ...required,
      LEASE_MS: '2000',
      MCP_TOOL_PACKS: ' reports ',
      METRICS_PORT: '0',
      REDIS_PREFIX: '',
    });
    expect(env).toMatchObject({
      LEASE_MS: 2_000,
      ENQUEUE_GRACE_MS: 2_000,
      MCP_TOOL_PACKS: ['reports'],
    });
    expect(env.METRICS_PORT).toBe(0);
    expect(env.REDIS_PREFIX).toBeUndefined();
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
});
