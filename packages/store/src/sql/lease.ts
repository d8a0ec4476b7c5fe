import { lockInIdOrder } from './row-locks.js';

/**
 * The lease's claim statements (lease/lease.ts runs them as the named prepared statements
 * claim_lease, claim_leases and claim_fair). `returning` is the row's column list.
 */

/**
 * A claim, written once like the create (task-repository.ts): built with the query builder, its
 * 31 returned columns were compiled again on every claim, the largest share of a worker's
 * allocations after pg's own. $1 the worker, $2 the lease in ms, $3 the task id (or ids).
 * The SET takes the lease, the new fence and one more attempt, and counts a failure for a
 * takeover (a lease nobody released means its holder died mid-attempt); the WHERE takes only a
 * `working` task nobody holds a live lease on.
 */
/** A task a claim may take: `working`, and nobody holds a live lease on it (isClaimable too). */
const claimable = (row = '') =>
  `${row}status = 'working' AND (${row}lease_owner IS NULL OR ${row}lease_expires_at <= now())`;
export const CLAIMABLE = claimable();
/** CLAIMABLE for `tasks AS t` (the row locks of sql/row-locks.ts name the table so). */
const CLAIMABLE_T = claimable('t.');

/**
 * The claim of several tasks by id (`$3`): the claimable ones among them, locked in id order
 * (sql/row-locks.ts) before the claim writes them.
 */
export const CLAIM_MANY_WHERE = `id IN (${lockInIdOrder({ where: `t.id = ANY($3::text[]) AND ${CLAIMABLE_T}` })})`;

export const claimText = (which: string, returning: string): string => `UPDATE tasks SET
    lease_owner = $1,
    lease_expires_at = now() + $2::bigint * interval '1 millisecond',
    lease_epoch = lease_epoch + 1,
    attempts = attempts + 1,
    failures = failures + (CASE WHEN lease_owner IS NOT NULL THEN 1 ELSE 0 END)
  WHERE ${which} AND ${CLAIMABLE}
  RETURNING ${returning}`;

/**
 * The fair queue (migration 0010): tasks nobody has claimed yet, `working`, unheld,
 * `attempts = 0`. Each has a `fair_round`, its place in its tenant's round robin.
 */
const FAIR_QUEUE = `status = 'working' AND lease_owner IS NULL AND attempts = 0`;

/**
 * The claim a worker makes for its wake-ups ($3, one id per wake-up, repeats kept), under the
 * fairness policy of docs/adr/0003-fair-scheduling-across-tenants.md. A wake-up's own task is
 * taken when it has been claimed before (a resume, a retry after its backoff, a takeover, a
 * release: those keep their own wake-up, and so their delays) or when it is in the round now
 * served (the lowest waiting round). Only rows it will claim are locked, so a task passed over is
 * never hidden from the others' picks. Any other wake-up (its task waits in a later round, or is
 * not claimable at all) takes the fairest waiting task instead: lowest round, then oldest. So
 * the wake-up queue says "there is work" and Postgres decides which. A claimed-before task waits
 * for a row lock as a claim by id always did (a resume or a sweep committing); every pick from
 * the fair queue is `SKIP LOCKED`, so workers never wait on each other's picks, and one never
 * takes what another is taking. Cost: the same one statement as a claim by id; the round read is
 * one index head.
 */
export const claimFairText = (returning: string): string => `WITH claimed_before AS (
    ${lockInIdOrder({
      where: `t.id = ANY($3::text[]) AND ${CLAIMABLE_T}
      AND NOT (t.lease_owner IS NULL AND t.attempts = 0)`,
    })}
  ), in_round AS (
    SELECT id FROM tasks
    WHERE id = ANY($3::text[]) AND ${FAIR_QUEUE}
      AND fair_round <= (SELECT fair_round FROM tasks WHERE ${FAIR_QUEUE} ORDER BY fair_round LIMIT 1)
    FOR UPDATE SKIP LOCKED
  ), own AS (
    SELECT id FROM claimed_before UNION ALL SELECT id FROM in_round
  ), fair AS (
    SELECT id FROM tasks
    WHERE ${FAIR_QUEUE} AND id <> ALL (ARRAY(SELECT id FROM own))
    ORDER BY fair_round, created_at, id
    LIMIT (SELECT cardinality($3::text[]) - count(*) FROM own)
    FOR UPDATE SKIP LOCKED
  )
  UPDATE tasks SET
    lease_owner = $1,
    lease_expires_at = now() + $2::bigint * interval '1 millisecond',
    lease_epoch = lease_epoch + 1,
    attempts = attempts + 1,
    failures = failures + (CASE WHEN lease_owner IS NOT NULL THEN 1 ELSE 0 END)
  WHERE id = ANY (ARRAY(SELECT id FROM own UNION ALL SELECT id FROM fair))
    AND ${CLAIMABLE}
  RETURNING ${returning}`;
