import type { WorkerEnv } from './env.js';

/**
 * A startup failure an operator causes and can fix, as one line naming the variable, what failed
 * and what to do; undefined for anything else (logged with its stack as before).
 */
export function describeStartupError(
  error: unknown,
  env: Pick<WorkerEnv, 'METRICS_PORT'>,
): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const syscall = (error as { syscall?: unknown } | null)?.syscall;
  if (code === 'EADDRINUSE' && syscall === 'listen') {
    const port = env.METRICS_PORT;
    return (
      `METRICS_PORT=${port}: port ${port} is already in use (another worker on this host?). ` +
      'Set METRICS_PORT to a free port, or METRICS_PORT=0 to run without /healthz and /metrics.'
    );
  }
  return undefined;
}

/** The URL with any password replaced by `***`, safe to print. */
export function maskPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

const WHAT_RUNS_THERE: Record<'DATABASE_URL' | 'REDIS_URL', string> = {
  DATABASE_URL: 'Postgres',
  REDIS_URL: 'Redis',
};

/** The network error code of a failed connect, also when Node tried several addresses at once. */
function connectErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const inner = (error as { errors?: unknown } | null)?.errors;
  if (Array.isArray(inner)) return inner.map(connectErrorCode).find((found) => found !== undefined);
  return undefined;
}

/**
 * A connection to the service a URL variable names that failed for a reason the operator can fix
 * (nothing listening, unknown host), as one line; undefined for any other error.
 */
export function describeConnectionFailure(
  variable: 'DATABASE_URL' | 'REDIS_URL',
  url: string,
  error: unknown,
): string | undefined {
  const code = connectErrorCode(error);
  let where: string;
  try {
    const parsed = new URL(url);
    const defaultPort = variable === 'DATABASE_URL' ? '5432' : '6379';
    where = `${parsed.hostname}:${parsed.port === '' ? defaultPort : parsed.port}`;
  } catch {
    return undefined;
  }
  const service = WHAT_RUNS_THERE[variable];
  const prefix = `${variable}=${maskPassword(url)}:`;
  const fix = `Start ${service} there, or set ${variable} to the address of a running ${service}.`;
  if (code === 'ECONNREFUSED') return `${prefix} connection refused to ${where}. ${fix}`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `${prefix} host ${where.split(':')[0]} was not found. ${fix}`;
  if (code === 'ETIMEDOUT') return `${prefix} connecting to ${where} timed out. ${fix}`;
  return undefined;
}

/** A startup failure already described in one line for the operator (printed without a stack). */
export class StartupError extends Error {
  override name = 'StartupError';
}
