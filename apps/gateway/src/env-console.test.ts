import { describe, expect, it } from 'vitest';
import { parseEnv } from './env.js';

const base = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
  REDIS_URL: 'redis://127.0.0.1:6379',
  MCP_AUTH: 'tokens',
  MCP_TOKENS: 'tok_aaaaaaaaaaaaaaaa:acme:alice',
  REQUEST_STATE_SECRET: 's'.repeat(32),
};

describe('MCP_CONSOLE_TOKENS', () => {
  it('leaves the console off when unset', () => {
    const result = parseEnv(base);
    expect(result.ok && result.config.consoleOperators).toBeUndefined();
  });

  it('reads tenant and all-tenant operators, read-only unless marked :actions', () => {
    const result = parseEnv({
      ...base,
      MCP_CONSOLE_TOKENS: 'ops-root-token-000000:*:actions, ops-acme-token-000000:acme',
    });
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(
      result.config.consoleOperators?.map(({ tenant, actions, actor }) => ({
        tenant,
        actions,
        actor,
      })),
    ).toEqual([
      {
        tenant: null,
        actions: true,
        actor: expect.stringMatching(/^console:\*:[0-9a-f]{8}$/) as unknown,
      },
      {
        tenant: 'acme',
        actions: false,
        actor: expect.stringMatching(/^console:acme:[0-9a-f]{8}$/) as unknown,
      },
    ]);
  });

  it('names every bad entry in one pass', () => {
    const result = parseEnv({
      ...base,
      MCP_CONSOLE_TOKENS:
        'short:acme,ops-token-00000000:acme:write,ops-token-00000000,ops-root-token-000000:*,ops-root-token-000000:acme',
    });
    expect(result).toEqual({
      ok: false,
      problems: [
        'MCP_CONSOLE_TOKENS: entry 1: token is shorter than 16 characters',
        'MCP_CONSOLE_TOKENS: entry 2: the third part may only be "actions" (got "write")',
        'MCP_CONSOLE_TOKENS: entry 3 must be token:tenant, token:*, or either with :actions appended',
        'MCP_CONSOLE_TOKENS: entry 5 repeats a token of an earlier entry',
      ],
    });
  });
});
