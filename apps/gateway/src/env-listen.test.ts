import { describe, expect, it } from 'vitest';
import { parseEnv } from './env.js';

const base = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
  REDIS_URL: 'redis://127.0.0.1:6379',
  MCP_AUTH: 'none',
};

describe('parseEnv listen limits (issue 11, item 6)', () => {
  it('applies the documented defaults', () => {
    const result = parseEnv(base);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.listenLimits).toEqual({
      maxStreams: 1000,
      maxStreamsPerPrincipal: 20,
      maxTaskIds: 100,
      maxBufferedBytes: 1_048_576,
      loadConcurrency: 4,
      flagTtlMs: 600_000,
    });
  });

  it('reads each variable and names a bad one', () => {
    const result = parseEnv({
      ...base,
      MCP_LISTEN_MAX_STREAMS: '50',
      MCP_LISTEN_STREAMS_PER_PRINCIPAL: '3',
      MCP_LISTEN_MAX_TASK_IDS: '10',
      MCP_LISTEN_BUFFER_BYTES: '65536',
      MCP_LISTEN_LOAD_CONCURRENCY: '2',
      MCP_LISTEN_FLAG_TTL_MS: '60000',
    });
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.listenLimits).toEqual({
      maxStreams: 50,
      maxStreamsPerPrincipal: 3,
      maxTaskIds: 10,
      maxBufferedBytes: 65_536,
      loadConcurrency: 2,
      flagTtlMs: 60_000,
    });
    const bad = parseEnv({ ...base, MCP_LISTEN_LOAD_CONCURRENCY: '0' });
    expect(bad.ok ? [] : bad.problems).toEqual([
      'MCP_LISTEN_LOAD_CONCURRENCY: Too small: expected number to be >0',
    ]);
  });
});
