import { DEFAULT_STATEMENT_TIMEOUT_MS, type Db } from './database.js';
import type { PoolerMode } from './database-settings.js';
import { statementTimeoutStatement } from '../sql/infrastructure.js';

/**
 * Start-up checks that a pooler in front of Postgres has not silently taken away the statement
 * bound every pooled statement relies on (a hung renewal or sweep must fail, not wait for ever).
 *
 * Without a pooler, createDb sends statement_timeout at connect, and the server must run with it:
 * if it does not, something between (PgBouncer with `ignore_startup_parameters =
 * statement_timeout`) dropped it, and DATABASE_POOLER=transaction is what the deployment needs.
 * Behind a transaction pooler nothing session-scoped can be sent, so the bound must be the
 * server's own default for the database or role; it must not be 0 (none).
 *
 * Answers one line for the operator, or undefined when the bound holds.
 */
export async function statementTimeoutProblem(
  db: Db,
  options: { variable: string; pooler: PoolerMode; expectedMs?: number },
): Promise<string | undefined> {
  const expectedMs = options.expectedMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const result = await statementTimeoutStatement().execute(db);
  const actualMs = Number(result.rows[0]?.setting ?? '0');
  if (options.pooler === 'none') {
    if (actualMs === expectedMs) return undefined;
    return `${options.variable}: statements run with statement_timeout=${actualMs} ms, not the ${expectedMs} ms sent at connect: a pooler in front dropped it (PgBouncer's ignore_startup_parameters). Set DATABASE_POOLER=transaction and DATABASE_DIRECT_URL, and give the database its own bound (docs/deployment.md)`;
  }
  if (actualMs > 0) return undefined;
  return `${options.variable}: DATABASE_POOLER=transaction and the server's statement_timeout is 0 (none), so a hung statement would wait for ever; set a bound where the pooler cannot drop it: ALTER DATABASE <name> SET statement_timeout = '${expectedMs / 1000}s' (or ALTER ROLE … SET), see docs/deployment.md`;
}

/**
 * PgBouncer refuses a startup parameter it does not track (statement_timeout, which createDb
 * sends when it does not know a pooler is there) with this message: one line that names the fix.
 */
export function describePoolerRefusal(variable: string, error: unknown): string | undefined {
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message !== 'string' || !message.includes('unsupported startup parameter')) {
    return undefined;
  }
  return `${variable}: the server refused a connection setting (${message}): it is a pooler such as PgBouncer. Set DATABASE_POOLER=transaction (and DATABASE_DIRECT_URL for the session work), see docs/deployment.md`;
}
