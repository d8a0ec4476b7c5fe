// One-line startup failures for the two URLs every process reads (DATABASE_URL, REDIS_URL): what
// an operator mistyped or has not started, named so they can fix it. Shared by gateway and worker.

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
