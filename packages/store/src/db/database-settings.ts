/**
 * How a process reaches Postgres, read from the environment by both apps (gateway, worker) and
 * the migrate CLI, so the rules are the same everywhere:
 *
 * - `DATABASE_URL`: every statement that fits in one transaction (may be a transaction pooler);
 * - `DATABASE_DIRECT_URL`: the session work a transaction pooler cannot carry (LISTEN, the
 *   sweeper's advisory-lock leadership, migrations); default DATABASE_URL;
 * - `DATABASE_POOLER`: `none` or `transaction` (what DATABASE_URL leads to); with `transaction`
 *   nothing session-scoped is sent through DATABASE_URL (docs/deployment.md);
 * - `DATABASE_PREPARED_STATEMENTS`: `on`/`off`; default off behind a transaction pooler (PgBouncer
 *   before 1.21 cannot keep a named statement across transactions), on otherwise.
 */
export type PoolerMode = 'none' | 'transaction';

export interface DatabaseSettings {
  url: string;
  directUrl: string;
  pooler: PoolerMode;
  preparedStatements: boolean;
}

export type DatabaseSettingsResult =
  { ok: true; settings: DatabaseSettings } | { ok: false; problems: string[] };

const POOLERS: readonly PoolerMode[] = ['none', 'transaction'];

function postgresUrlProblem(variable: string, value: string): string | undefined {
  if (!URL.canParse(value)) return `${variable}: must be a URL (postgres://user@host:port/db)`;
  const protocol = new URL(value).protocol;
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
    return `${variable}: must be a postgres:// URL, not ${protocol}//`;
  }
  return undefined;
}

/** Empty values count as unset (compose files and manifests render optional variables as ""). */
const read = (env: Record<string, string | undefined>, key: string): string | undefined => {
  const value = env[key]?.trim();
  return value === undefined || value === '' ? undefined : value;
};

export function parseDatabaseSettings(
  env: Record<string, string | undefined>,
): DatabaseSettingsResult {
  const problems: string[] = [];
  const url = read(env, 'DATABASE_URL');
  if (url === undefined) problems.push('DATABASE_URL: required (postgres://user@host:port/db)');
  else {
    const problem = postgresUrlProblem('DATABASE_URL', url);
    if (problem !== undefined) problems.push(problem);
  }
  const direct = read(env, 'DATABASE_DIRECT_URL');
  if (direct !== undefined) {
    const problem = postgresUrlProblem('DATABASE_DIRECT_URL', direct);
    if (problem !== undefined) problems.push(problem);
  }
  const poolerText = read(env, 'DATABASE_POOLER') ?? 'none';
  const pooler = POOLERS.find((mode) => mode === poolerText);
  if (pooler === undefined) {
    problems.push(
      `DATABASE_POOLER: "${poolerText}" is not one of ${POOLERS.join(', ')} (what DATABASE_URL leads to)`,
    );
  } else if (pooler === 'transaction' && direct === undefined) {
    problems.push(
      'DATABASE_DIRECT_URL: required with DATABASE_POOLER=transaction (LISTEN, the sweeper lock and migrations need a session: point it at Postgres itself or a session-mode pool)',
    );
  }
  const preparedText = read(env, 'DATABASE_PREPARED_STATEMENTS');
  if (preparedText !== undefined && preparedText !== 'on' && preparedText !== 'off') {
    problems.push(`DATABASE_PREPARED_STATEMENTS: "${preparedText}" is not on or off`);
  }
  if (problems.length > 0 || url === undefined || pooler === undefined) {
    return { ok: false, problems };
  }
  return {
    ok: true,
    settings: {
      url,
      directUrl: direct ?? url,
      pooler,
      preparedStatements:
        preparedText === undefined ? pooler !== 'transaction' : preparedText === 'on',
    },
  };
}
