import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The columns whose change the update trigger's function records (every condition in it compares
 * one of these between OLD and NEW). Only a statement that names one of them in its SET list
 * can change it: the before-write trigger sets only last_updated_at, expires_at and
 * unheld_due_at.
 */
const RECORDED_COLUMNS = sql.raw(
  'status, lease_epoch, lease_owner, steps_saved, cancel_requested_at, input_responses, failures, enqueued_at',
);

/** 0017's insert function: two statements, the second one empty for every `working` create. */
const TWO_STATEMENT_INSERT = sql`
  CREATE OR REPLACE FUNCTION task_events_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO task_events (task_id, kind, data)
    SELECT id, 'created', jsonb_build_object('tool', tool_name, 'status', status)
    FROM inserted;
    INSERT INTO task_events (task_id, kind, data)
    SELECT id, status, jsonb_build_object('message', status_message)
    FROM inserted WHERE status <> 'working';
    RETURN NULL;
  END
  $$
`;

/**
 * The task history at under 10 % of the hot paths' server work (issue 27,
 * docs/adr/0012-task-history-write-cost.md). Counted with callgrind, server instructions per
 * lifecycle (create, claim, 2 checkpoints, 2 renewals, complete): about 0.13 M of the history's
 * 0.73 M go, each measured alone (docs/adr/0012-task-history-write-cost.md):
 * - The update trigger names its columns (`AFTER UPDATE OF …`): Postgres then skips it, before
 *   any PL/pgSQL, for a statement that sets none of them — a lease renewal (only
 *   `lease_expires_at`), a listen flag. Unlike a WHEN, a column list is a bitmap test with nothing
 *   to read back and prepare per statement (migration 0021). The function and its events are
 *   unchanged.
 * - No CHECK on `task_events.data`: Postgres reads a table's CHECK expressions back from text and
 *   prepares them for every INSERT statement, and each event is one (about 20,000 instructions).
 *   Its writers are the triggers (always `jsonb_build_object` or the `{}` default) and
 *   recordAudit (a JsonObject), so nothing else can put a non-object there.
 * - One BRIN index on `(id, at)` instead of one on each: a multi-column BRIN serves a condition
 *   on either column alone (the live tail on `id`, the health charts on `at`), and each event
 *   then pays one index open and summary update instead of two.
 * - The insert trigger writes the `created` rows and the rows of tasks created settled in one
 *   INSERT: a create no longer runs a second, empty INSERT.
 */
export const taskEventsLighterWrites: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`DROP TRIGGER task_events_on_update ON tasks`.execute(db);
    await sql`
      CREATE TRIGGER task_events_on_update AFTER UPDATE OF ${RECORDED_COLUMNS} ON tasks
      FOR EACH ROW EXECUTE FUNCTION task_events_on_update()
    `.execute(db);
    await sql`ALTER TABLE task_events DROP CONSTRAINT task_events_data_object`.execute(db);
    await sql`
      CREATE INDEX task_events_by_id_and_time ON task_events USING brin (id, at)
    `.execute(db);
    await sql`DROP INDEX task_events_by_id`.execute(db);
    await sql`DROP INDEX task_events_by_time`.execute(db);
    await sql`
      CREATE OR REPLACE FUNCTION task_events_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- The created rows first, then a settle row for each task created settled, as before.
        INSERT INTO task_events (task_id, kind, data)
        SELECT id, 'created', jsonb_build_object('tool', tool_name, 'status', status)
        FROM inserted
        UNION ALL
        SELECT id, status, jsonb_build_object('message', status_message)
        FROM inserted WHERE status <> 'working';
        RETURN NULL;
      END
      $$
    `.execute(db);
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await TWO_STATEMENT_INSERT.execute(db);
    await sql`CREATE INDEX task_events_by_id ON task_events USING brin (id)`.execute(db);
    await sql`CREATE INDEX task_events_by_time ON task_events USING brin (at)`.execute(db);
    await sql`DROP INDEX task_events_by_id_and_time`.execute(db);
    await sql`
      ALTER TABLE task_events
      ADD CONSTRAINT task_events_data_object CHECK (jsonb_typeof(data) = 'object')
    `.execute(db);
    await sql`DROP TRIGGER task_events_on_update ON tasks`.execute(db);
    await sql`
      CREATE TRIGGER task_events_on_update AFTER UPDATE ON tasks
      FOR EACH ROW EXECUTE FUNCTION task_events_on_update()
    `.execute(db);
  },
};
