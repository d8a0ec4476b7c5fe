/**
 * Why a Postgres (or Redis) call failed when the fault is the infrastructure's, not the request's
 * nor a bug: the server is unreachable or going away, the connection died, the server is out of
 * connection slots or read-only after a failover, or no connection or answer came within its
 * bound. Retrying the same call later is right; the gateway answers 503 with Retry-After and the
 * worker sends the wake-up again without holding it against the task.
 */
export type InfrastructureFailure =
  | 'unreachable'
  | 'connection_lost'
  | 'shutting_down'
  | 'read_only'
  | 'too_many_connections'
  | 'no_free_connection'
  | 'timed_out'
  | 'out_of_resources'
  | 'conflict';

/** The one table of such failures: SQLSTATEs first, then classes, socket errnos, driver messages. */
const BY_SQLSTATE: Readonly<Record<string, InfrastructureFailure>> = {
  '08001': 'unreachable', // sqlclient_unable_to_establish_sqlconnection
  '08004': 'unreachable', // sqlserver_rejected_establishment_of_sqlconnection
  '53300': 'too_many_connections',
  '57P01': 'shutting_down', // admin_shutdown (pg_ctl stop -m fast, pg_terminate_backend)
  '57P02': 'shutting_down', // crash_shutdown (another backend crashed, or stop -m immediate)
  '57P03': 'shutting_down', // cannot_connect_now (starting up, shutting down, in recovery)
  '25006': 'read_only', // read_only_sql_transaction: a write reached a standby (after a failover)
  '57014': 'timed_out', // query_canceled: createDb's statement_timeout
  '40001': 'conflict', // serialization_failure, and a standby's conflict with recovery
  '40P01': 'conflict', // deadlock_detected
  '25P03': 'connection_lost', // idle_in_transaction_session_timeout: a step transaction left idle
};
const BY_SQLSTATE_CLASS: Readonly<Record<string, InfrastructureFailure>> = {
  '08': 'connection_lost', // connection exception
  '53': 'out_of_resources', // insufficient resources (disk full, out of memory)
};
const BY_ERRNO: Readonly<Record<string, InfrastructureFailure>> = {
  ECONNREFUSED: 'unreachable',
  ENOTFOUND: 'unreachable',
  EAI_AGAIN: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ECONNRESET: 'connection_lost',
  EPIPE: 'connection_lost',
  ETIMEDOUT: 'timed_out',
};
/** Driver errors that carry no code (pg, pg-pool, ioredis). */
const BY_MESSAGE: readonly [RegExp, InfrastructureFailure][] = [
  [/Connection terminated/i, 'connection_lost'],
  [/Client has encountered a connection error/i, 'connection_lost'],
  [/timeout exceeded when trying to connect/i, 'no_free_connection'],
  [/Query read timeout/i, 'timed_out'], // pg's client-side query_timeout: the server went silent
  [/Connection is closed/i, 'connection_lost'],
  [/Stream isn't writeable/i, 'connection_lost'],
];

/** The infrastructure failure an error is, or undefined for anything else (a bug, a bad input). */
export function infrastructureFailure(error: unknown): InfrastructureFailure | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    const known = BY_SQLSTATE[code] ?? BY_ERRNO[code];
    if (known !== undefined) return known;
    if (/^[0-9A-Z]{5}$/.test(code)) {
      const byClass = BY_SQLSTATE_CLASS[code.slice(0, 2)];
      if (byClass !== undefined) return byClass;
    }
  }
  const message = (error as { message?: unknown }).message;
  if (typeof message === 'string') {
    const match = BY_MESSAGE.find(([pattern]) => pattern.test(message));
    if (match !== undefined) return match[1];
  }
  // AggregateError (a dual-stack connect that failed on every address).
  const errors = (error as { errors?: unknown }).errors;
  if (!Array.isArray(errors)) return undefined;
  for (const inner of errors) {
    const found = infrastructureFailure(inner);
    if (found !== undefined) return found;
  }
  return undefined;
}

export function isTransientInfrastructureError(error: unknown): boolean {
  return infrastructureFailure(error) !== undefined;
}
