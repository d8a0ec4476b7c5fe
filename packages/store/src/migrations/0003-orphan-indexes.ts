import { sql, type Kysely } from 'kysely';
import { createIndexConcurrently, type StoreMigration } from './online.js';

/**
 * The sweeper's orphan query, index-driven. An orphan is a `working` task that is either unheld
 * or whose lease ran out; with one index per case, each half of the query reads only the rows
 * that are due, never the (possibly many) tasks held by live workers, which the older
 * `tasks_working_by_enqueue` index made it walk on every sweep. That index stays: the KEDA
 * trigger's count of runnable tasks is an index-only scan of it (docs/deployment.md, tested in
 * tooling/deploy-checks/test/keda-query.test.ts). Built concurrently: writes go on (issue 25).
 */
export const orphanIndexes: StoreMigration = {
  transactional: false,
  up: createOrphanIndexes,
};

/** The two indexes as 0003 defines them (0022's down restores them). */
export async function createOrphanIndexes(db: Kysely<unknown>): Promise<void> {
  await createIndexConcurrently(
    db,
    'tasks_unheld_working_by_due',
    sql`ON tasks ((coalesce(enqueued_at, last_updated_at)))
        WHERE status = 'working' AND lease_owner IS NULL`,
  );
  await createIndexConcurrently(
    db,
    'tasks_held_working_by_lease_expiry',
    sql`ON tasks (lease_expires_at) WHERE status = 'working' AND lease_owner IS NOT NULL`,
  );
}
