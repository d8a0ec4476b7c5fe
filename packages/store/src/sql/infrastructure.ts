import { sql } from 'kysely';

/** Statements about the database itself, not the tasks (db/ runs them). */

export const replicaPollStatement = (p: { ids: readonly string[] }) =>
  sql<{ replay: string | null; ids: string[] | null }>`
      SELECT pg_last_wal_replay_lsn()::text AS replay,
             (SELECT array_agg(id) FROM tasks WHERE id = ANY(${p.ids}::text[])) AS ids
    `;

export const replicationDurabilityStatement = () =>
  sql<{ commit: string; standbys: string }>`
    SELECT current_setting('synchronous_commit') AS commit,
           current_setting('synchronous_standby_names') AS standbys
  `;

export const statementTimeoutStatement = () =>
  sql<{ setting: string }>`
    SELECT setting FROM pg_settings WHERE name = 'statement_timeout'
  `;
