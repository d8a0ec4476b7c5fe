import { sql } from 'kysely';

/**
 * The sweeper's hand-written statements (sweeper/sweeper-repository.ts runs them). The text is the
 * statement sent, so a change here is a change of the query plan: EXPLAIN it (bench/explain-orphans.ts).
 */

export const findOrphansStatement = (p: {
  cutoff: Date;
  limit: number;
  expiredLeases: boolean;
  now: Date;
}) =>
  sql<{ id: string }>`
    SELECT id FROM (
      (SELECT id, unheld_due_at AS due FROM tasks
        WHERE status = 'working' AND lease_owner IS NULL AND unheld_due_at <= ${p.cutoff}
        ORDER BY unheld_due_at LIMIT ${p.limit})
      UNION ALL
      (SELECT id, lease_expires_at AS due FROM tasks
        WHERE ${p.expiredLeases}::boolean
          AND status = 'working' AND lease_owner IS NOT NULL AND lease_expires_at <= ${p.now}
          AND coalesce(enqueued_at, last_updated_at) <= ${p.cutoff}
        ORDER BY lease_expires_at LIMIT ${p.limit})
    ) AS orphans
    ORDER BY due LIMIT ${p.limit}
  `;

/** The leadership session's lock, by name ($1), on its own connection (sweeper/leadership.ts). */
export const TRY_LOCK = 'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS acquired';
export const UNLOCK = 'SELECT pg_advisory_unlock(hashtextextended($1, 0))';
/** Postgres ends the leader's session after this long silent ($1 in ms). */
export const SET_IDLE_SESSION_TIMEOUT = "SELECT set_config('idle_session_timeout', $1, false)";
