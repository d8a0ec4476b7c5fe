import { describe, expect, it } from 'vitest';
import { parseEnv } from './env.js';

const base = {
  DATABASE_URL: 'postgres://app@pgbouncer:6432/tasks',
  REDIS_URL: 'redis://127.0.0.1:6379',
  MCP_AUTH: 'none',
};

describe('the database settings (DATABASE_DIRECT_URL, DATABASE_POOLER, DATABASE_READ_URL)', () => {
  it('defaults to no pooler: the direct URL is DATABASE_URL, prepared statements on', () => {
    const result = parseEnv(base);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.database).toEqual({
      url: 'postgres://app@pgbouncer:6432/tasks',
      directUrl: 'postgres://app@pgbouncer:6432/tasks',
      pooler: 'none',
      preparedStatements: true,
    });
  });

  it('behind a transaction pooler: the session work on the direct URL, prepared statements off', () => {
    const result = parseEnv({
      ...base,
      DATABASE_POOLER: 'transaction',
      DATABASE_DIRECT_URL: 'postgres://app@postgres:5432/tasks',
    });
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.database).toEqual({
      url: 'postgres://app@pgbouncer:6432/tasks',
      directUrl: 'postgres://app@postgres:5432/tasks',
      pooler: 'transaction',
      preparedStatements: false,
    });
  });

  it('keeps prepared statements when told the pooler holds them (PgBouncer >= 1.21)', () => {
    const result = parseEnv({
      ...base,
      DATABASE_POOLER: 'transaction',
      DATABASE_DIRECT_URL: 'postgres://app@postgres:5432/tasks',
      DATABASE_PREPARED_STATEMENTS: 'on',
    });
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.database.preparedStatements).toBe(true);
  });

  it('refuses a transaction pooler without a direct URL, in one line', () => {
    expect(parseEnv({ ...base, DATABASE_POOLER: 'transaction' })).toEqual({
      ok: false,
      problems: [
        'DATABASE_DIRECT_URL: required with DATABASE_POOLER=transaction (LISTEN, the sweeper lock and migrations need a session: point it at Postgres itself or a session-mode pool)',
      ],
    });
  });

  it('refuses an unknown pooler mode and prepared-statements value', () => {
    const result = parseEnv({
      ...base,
      DATABASE_POOLER: 'session',
      DATABASE_PREPARED_STATEMENTS: 'yes',
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      'DATABASE_POOLER: Invalid option: expected one of "none"|"transaction"',
      'DATABASE_PREPARED_STATEMENTS: Invalid option: expected one of "on"|"off"',
    ]);
  });

  it('reads DATABASE_READ_URL as one replica or a comma list of them', () => {
    const one = parseEnv({ ...base, DATABASE_READ_URL: 'postgres://app@reader:5432/tasks' });
    const several = parseEnv({
      ...base,
      DATABASE_READ_URL: 'postgres://app@replica-1:5432/tasks, postgres://app@replica-2:5432/tasks',
    });
    if (!one.ok || !several.ok) throw new Error('expected a valid configuration');
    expect(one.config.databaseReadUrls).toEqual(['postgres://app@reader:5432/tasks']);
    expect(several.config.databaseReadUrls).toEqual([
      'postgres://app@replica-1:5432/tasks',
      'postgres://app@replica-2:5432/tasks',
    ]);
    expect(parseEnv({ ...base, DATABASE_READ_URL: 'postgres://a@b/c,not a url' })).toEqual({
      ok: false,
      problems: ['DATABASE_READ_URL: must be a URL, or a comma list of URLs (one per replica)'],
    });
  });
});
