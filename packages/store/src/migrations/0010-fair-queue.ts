import { sql, type Kysely } from 'kysely';
import { createIndexConcurrently, inTransaction, type StoreMigration } from './online.js';

/**
 * Fair scheduling across tenants (docs/adr/0003-fair-scheduling-across-tenants.md). Each task
 * gets a `fair_round` when it is inserted: its place in its tenant's line, counted in rounds of
 * a round robin. A tenant with nothing waiting starts in the round now being served (the lowest
 * round among waiting tasks); one with tasks waiting goes one round after its last. Claims take
 * the lowest round first (lease.ts), so a tenant with 3,000 tasks waiting and one with a single
 * task alternate instead of queueing one behind the other.
 *
 * "Waiting" means never claimed: `working`, unheld, `attempts = 0` (the fair queue). Two partial
 * indexes hold only those rows, so both lookups of the trigger and the claim's pick read an index
 * head, whatever the backlog; a claimed row leaves both for good.
 *
 * A trigger, not the INSERT itself, so every build that inserts (a gateway of the previous release
 * during a rolling deploy too) queues fairly. Rows of one multi-row INSERT see the rows inserted
 * before them, so one tenant's batch spreads over consecutive rounds. Two transactions inserting
 * for one tenant at once may read the same last round and share it: a tie, broken by age, never a
 * lost task. Rows from before this migration get round 0, the front, where their age puts them.
 * Online (issue 25): the indexes are built concurrently, before the trigger that reads them.
 */
export const fairQueue: StoreMigration = {
  transactional: false,
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`ALTER TABLE tasks ADD COLUMN IF NOT EXISTS fair_round bigint NOT NULL DEFAULT 0`.execute(
      db,
    );
    await createIndexConcurrently(
      db,
      'tasks_fair_queue',
      sql`ON tasks (fair_round, created_at, id)
          WHERE status = 'working' AND lease_owner IS NULL AND attempts = 0`,
    );
    await createIndexConcurrently(
      db,
      'tasks_fair_queue_by_tenant',
      sql`ON tasks (tenant, fair_round)
          WHERE status = 'working' AND lease_owner IS NULL AND attempts = 0`,
    );
    await inTransaction(db, async (trx) => {
      // One expression rather than two statements: the cheaper form per inserted row.
      // greatest() skips NULLs: nothing waiting at all starts the rounds at 0 again.
      await sql`
      CREATE OR REPLACE FUNCTION tasks_assign_fair_round() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.fair_round := greatest(
          (SELECT fair_round FROM tasks
            WHERE status = 'working' AND lease_owner IS NULL AND attempts = 0
            ORDER BY fair_round LIMIT 1),
          (SELECT fair_round + 1 FROM tasks
            WHERE tenant = NEW.tenant AND status = 'working' AND lease_owner IS NULL AND attempts = 0
            ORDER BY fair_round DESC LIMIT 1),
          0);
        RETURN NEW;
      END
      $$
    `.execute(trx);
      await sql`DROP TRIGGER IF EXISTS tasks_assign_fair_round ON tasks`.execute(trx);
      await sql`
      CREATE TRIGGER tasks_assign_fair_round BEFORE INSERT ON tasks
      FOR EACH ROW EXECUTE FUNCTION tasks_assign_fair_round()
    `.execute(trx);
    });
  },
};
