/**
 * One order for the row locks of `tasks`: by id.
 *
 * A statement that may wait for several rows (a worker's shared checkpoints, a replica's listen
 * flags for many streams, a claim of resumed tasks) must take their locks in the same order as
 * every other such statement, or two of them deadlock: Postgres breaks the cycle only after
 * `deadlock_timeout` (1 s by default), failing one statement and stalling everything queued
 * behind both. An UPDATE locks rows in the order its plan meets them, and that is not the order
 * of the id list it was given: on a small table, or with a prepared statement's generic plan
 * chosen while the table was small, Postgres hashes the list and scans the table, meeting the
 * rows in their physical order. `SELECT … ORDER BY id FOR UPDATE` locks above its sort, so its
 * order holds whatever the plan (sql/row-locks.test.ts forces the scanning plans).
 *
 * A statement that locks one row, or never waits (NOWAIT, SKIP LOCKED), cannot close a cycle and
 * needs none of this.
 */

/**
 * A CTE body that locks, in id order, the rows of `tasks AS t` that `from` and `where` select
 * (`from` joins other relations to `t`; `columns` are what the statement reads from it). Name it
 * `AS MATERIALIZED` and join the UPDATE to it: every row the UPDATE writes is then locked here
 * first, so the UPDATE itself never waits for a row.
 */
export function lockInIdOrder(p: { columns?: string; from?: string; where: string }): string {
  return `SELECT ${p.columns ?? 't.id'} FROM ${p.from ?? 'tasks AS t'}
      WHERE ${p.where}
      ORDER BY t.id FOR UPDATE OF t`;
}
