import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { newTaskId } from '@mcp-tasks/tasks';
import { createTestDatabase, launchProcess, type TestDatabase } from '@mcp-tasks/testing';
import { createDb, type Db } from './database.js';
import { SchemaMissingError, SchemaTooNewError } from '../errors.js';
import { MIGRATION_TABLE, assertSchemaCompatible, migrateTo, migrateToLatest } from './migrate.js';
import { MIGRATIONS } from '../migrations/index.js';
import { findOrphans } from '../sweeper/sweeper-repository.js';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function freshDatabase(label: string): Promise<{ database: TestDatabase; db: Db }> {
  const database = await createTestDatabase(label);
  const db = createDb({ connectionString: database.connectionString, max: 4 });
  cleanups.push(async () => {
    await db.destroy();
    await database.drop();
  });
  return { database, db };
}

/**
 * Everything the migrations make, as text: columns, indexes, constraints (and whether they are
 * validated), triggers, functions and table settings. Compared with a snapshot taken before the
 * migrations learned to build indexes without blocking writes, so the schema stayed the same.
 */
async function describeSchema(db: Db): Promise<Record<string, string[]>> {
  const texts = async (query: ReturnType<typeof sql<{ text: string }>>) =>
    (await query.execute(db)).rows.map((row) => row.text);
  return {
    columns: await texts(sql`
      SELECT table_name || '.' || column_name || ' ' || data_type || ' null=' || is_nullable
             || ' default=' || coalesce(column_default, '-') AS text
      FROM information_schema.columns WHERE table_schema = 'public'
      ORDER BY table_name, ordinal_position`),
    indexes: await texts(sql`
      SELECT pg_get_indexdef(i.indexrelid) || CASE WHEN i.indisvalid THEN '' ELSE ' INVALID' END AS text
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'
      ORDER BY c.relname`),
    constraints: await texts(sql`
      SELECT conrelid::regclass || '.' || conname || ' ' || pg_get_constraintdef(oid)
             || CASE WHEN convalidated THEN '' ELSE ' NOT VALIDATED' END AS text
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace
      ORDER BY conrelid::regclass::text, conname`),
    triggers: await texts(sql`
      SELECT pg_get_triggerdef(oid) AS text FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname`),
    functions: await texts(sql`
      SELECT pg_get_functiondef(p.oid) AS text FROM pg_proc p
      WHERE p.pronamespace = 'public'::regnamespace ORDER BY p.proname`),
    settings: await texts(sql`
      SELECT relname || ' ' || array_to_string(reloptions, ',') AS text FROM pg_class
      WHERE relnamespace = 'public'::regnamespace AND reloptions IS NOT NULL ORDER BY relname`),
  };
}

/** `rows` completed tasks in the columns 0001 made, triggers off (history, not new events). */
async function fillCompletedTasks(db: Db, rows: number): Promise<void> {
  await db.connection().execute(async (connection) => {
    await sql`SET session_replication_role = replica`.execute(connection);
    await sql`
      INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, result)
      SELECT 'kept-' || g, 'tenant-' || (g % 50), 'p', 'tools/call', 'tool', '{}', 'completed',
             '{"content": []}'
      FROM generate_series(1, ${rows}::int) AS g`.execute(connection);
    await sql`RESET session_replication_role`.execute(connection);
  });
  await sql`ANALYZE tasks`.execute(db);
}

const indexState = async (db: Db, name: string) =>
  (
    await sql<{ definition: string; valid: boolean }>`
      SELECT pg_get_indexdef(indexrelid) AS definition, indisvalid AS valid FROM pg_index
      WHERE indexrelid = to_regclass(${name}::text)`.execute(db)
  ).rows;

describe('migrations', () => {
  it('makes the same schema as before index builds went concurrent', async () => {
    const { db } = await freshDatabase('migrate_schema');
    await migrateToLatest(db);
    await expect(JSON.stringify(await describeSchema(db), null, 2) + '\n').toMatchFileSnapshot(
      './__snapshots__/migrated-schema.json',
    );
  });

  it('0022 keeps the unheld tasks of an older schema findable by the orphan scan', async () => {
    const { db } = await freshDatabase('migrate_0022_backfill');
    await migrateToLatest(db);
    const migration = MIGRATIONS['0022_tasks_update_in_place']!;
    await migration.down!(db);
    // Written under the schema before 0022 (no unheld_due_at), one unheld and one held.
    const unheld = newTaskId();
    const held = newTaskId();
    await sql`
      INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, created_at,
                         lease_owner, lease_expires_at)
      VALUES (${unheld}, 't', 'p', 'tools/call', 'greet', '{}', now() - interval '1 hour', NULL, NULL),
             (${held}, 't', 'p', 'tools/call', 'greet', '{}', now() - interval '1 hour', 'w',
              now() + interval '1 hour')`.execute(db);
    await migration.up(db);
    const orphans = await findOrphans(db, new Date(), { wakeUpGraceMs: 60_000, limit: 10 });
    expect(orphans).toEqual([unheld]);
  });

  it('applies every known migration once and is a no-op the second time', async () => {
    const { db } = await freshDatabase('migrate_twice');
    expect(await migrateToLatest(db)).toEqual({ applied: Object.keys(MIGRATIONS) });
    expect(await migrateToLatest(db)).toEqual({ applied: [] });
    await expect(assertSchemaCompatible(db)).resolves.toBeUndefined();
  });

  it('lets several migrators race on one empty database and applies each migration exactly once', async () => {
    const { database } = await freshDatabase('migrate_race');
    const migrators = Array.from({ length: 6 }, () =>
      createDb({ connectionString: database.connectionString, max: 2 }),
    );
    try {
      const results = await Promise.all(migrators.map((db) => migrateToLatest(db)));
      expect(results.flatMap((r) => r.applied).sort()).toEqual(Object.keys(MIGRATIONS).sort());
      const rows = await sql<{
        name: string;
      }>`SELECT name FROM ${sql.table(MIGRATION_TABLE)}`.execute(migrators[0]!);
      expect(rows.rows.map((r) => r.name).sort()).toEqual(Object.keys(MIGRATIONS).sort());
    } finally {
      await Promise.all(migrators.map((db) => db.destroy()));
    }
  });

  it('works through `pnpm db:migrate`, twice and as two processes at once', async () => {
    const { database, db } = await freshDatabase('migrate_cli');
    const run = () =>
      launchProcess({
        entry: 'packages/store/src/cli/migrate.ts',
        env: { DATABASE_URL: database.connectionString },
      });
    const [first, second] = await Promise.all([run(), run()]);
    expect(await first.exited).toBe(0);
    expect(await second.exited).toBe(0);
    const outputs = [first.output(), second.output()].sort();
    expect(outputs).toEqual([
      `applied ${Object.keys(MIGRATIONS).join(', ')}\n`,
      'schema up to date\n',
    ]);
    const again = await run();
    expect(await again.exited).toBe(0);
    expect(again.output()).toBe('schema up to date\n');
    await expect(assertSchemaCompatible(db)).resolves.toBeUndefined();
  });

  it('refuses an unmigrated database', async () => {
    const { db } = await freshDatabase('migrate_missing');
    const error = await assertSchemaCompatible(db).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaMissingError);
    expect((error as SchemaMissingError).pendingMigrations).toEqual(Object.keys(MIGRATIONS));
  });

  it('refuses a database migrated by a newer build', async () => {
    const { db } = await freshDatabase('migrate_too_new');
    await migrateToLatest(db);
    await sql`INSERT INTO ${sql.table(MIGRATION_TABLE)} (name, timestamp)
              VALUES ('9999_from_the_future', now()::text)`.execute(db);
    const error = await assertSchemaCompatible(db).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect((error as SchemaTooNewError).unknownMigrations).toEqual(['9999_from_the_future']);
    // And a newer schema is never "migrated back": the migrator refuses instead of guessing.
    await expect(migrateToLatest(db)).rejects.toBeInstanceOf(SchemaTooNewError);
  });

  it("undoes 0022 by hand when asked: the orphan indexes back, the table's settings reset", async () => {
    const { db } = await freshDatabase('migrate_0022_down');
    await migrateToLatest(db);
    const shape = async () => {
      const indexes = await sql<{ name: string }>`
        SELECT indexname AS name FROM pg_indexes
        WHERE tablename = 'tasks' AND indexname ~ '^tasks_(un)?held_working_'
        ORDER BY indexname`.execute(db);
      const column = await sql<{ n: string }>`
        SELECT count(*) AS n FROM information_schema.columns
        WHERE table_name = 'tasks' AND column_name = 'unheld_due_at'`.execute(db);
      const options = await sql<{ options: string[] | null }>`
        SELECT reloptions AS options FROM pg_class WHERE relname = 'tasks'`.execute(db);
      return {
        indexes: indexes.rows.map((row) => row.name),
        unheldDueColumn: column.rows[0]!.n === '1',
        options: options.rows[0]!.options,
      };
    };
    expect(await shape()).toEqual({
      indexes: ['tasks_held_working_by_owner', 'tasks_unheld_working_by_due_at'],
      unheldDueColumn: true,
      options: [
        'fillfactor=80',
        'autovacuum_vacuum_threshold=1000',
        'autovacuum_vacuum_scale_factor=0.02',
        'autovacuum_analyze_threshold=1000',
        'autovacuum_analyze_scale_factor=0.05',
        'autovacuum_vacuum_cost_delay=2',
        'autovacuum_vacuum_cost_limit=1000',
      ],
    });
    await MIGRATIONS['0022_tasks_update_in_place']!.down!(db);
    expect(await shape()).toEqual({
      indexes: ['tasks_held_working_by_lease_expiry', 'tasks_unheld_working_by_due'],
      unheldDueColumn: false,
      options: null,
    });
  });
  it('0024 goes down to the unlisted update trigger, the CHECK and two BRIN indexes, and up again; a create writes the same rows', async () => {
    const { db } = await freshDatabase('migrate_0024');
    await migrateToLatest(db);
    const shape = async () => {
      const trigger = await sql<{ definition: string }>`
        SELECT pg_get_triggerdef(oid) AS definition FROM pg_trigger
        WHERE tgname = 'task_events_on_update'`.execute(db);
      const indexes = await sql<{ name: string }>`
        SELECT indexname AS name FROM pg_indexes WHERE tablename = 'task_events' ORDER BY indexname`.execute(
        db,
      );
      const checks = await sql<{ name: string }>`
        SELECT conname AS name FROM pg_constraint
        WHERE conrelid = 'task_events'::regclass AND contype = 'c'`.execute(db);
      return {
        trigger: trigger.rows[0]!.definition,
        indexes: indexes.rows.map((row) => row.name),
        checks: checks.rows.map((row) => row.name),
      };
    };
    // One multi-row create, a task created settled among them: its created row, then its settle row.
    const createdRows = async () => {
      const [working, cancelled] = [newTaskId(), newTaskId()];
      await sql`
        INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments, status, status_message)
        VALUES (${working}, 'acme', 'alice', 'tools/call', 'tool', '{}', 'working', NULL),
               (${cancelled}, 'acme', 'alice', 'tools/call', 'tool', '{}', 'cancelled', 'gone')`.execute(
        db,
      );
      const rows = await sql<{ task_id: string; kind: string; data: unknown }>`
        SELECT task_id, kind, data FROM task_events WHERE task_id IN (${working}, ${cancelled})
        ORDER BY id`.execute(db);
      return rows.rows.map((row) => [
        row.task_id === working ? 'working' : 'cancelled',
        row.kind,
        row.data,
      ]);
    };
    const rowsOfACreate = [
      ['working', 'created', { tool: 'tool', status: 'working' }],
      ['cancelled', 'created', { tool: 'tool', status: 'cancelled' }],
      ['cancelled', 'cancelled', { message: 'gone' }],
    ];
    const listed =
      'CREATE TRIGGER task_events_on_update AFTER UPDATE OF status, lease_epoch, lease_owner, steps_saved, cancel_requested_at, input_responses, failures, enqueued_at ON public.tasks FOR EACH ROW EXECUTE FUNCTION task_events_on_update()';
    expect(await shape()).toEqual({
      trigger: listed,
      indexes: ['task_events_by_id_and_time', 'task_events_by_task'],
      checks: [],
    });
    expect(await createdRows()).toEqual(rowsOfACreate);

    await MIGRATIONS['0024_task_events_lighter_writes']!.down!(db);
    expect(await shape()).toEqual({
      trigger:
        'CREATE TRIGGER task_events_on_update AFTER UPDATE ON public.tasks FOR EACH ROW EXECUTE FUNCTION task_events_on_update()',
      indexes: ['task_events_by_id', 'task_events_by_task', 'task_events_by_time'],
      checks: ['task_events_data_object'],
    });
    expect(await createdRows()).toEqual(rowsOfACreate);

    await MIGRATIONS['0024_task_events_lighter_writes']!.up(db);
    expect((await shape()).trigger).toBe(listed);
  });

  it("0025 goes down to one channel and up again: a cancel request reaches the workers' channel only with it", async () => {
    const { database, db } = await freshDatabase('migrate_0025');
    await migrateToLatest(db);
    const listener = new pg.Client({ connectionString: database.connectionString });
    await listener.connect();
    cleanups.push(() => listener.end());
    const heard: string[] = [];
    listener.on('notification', (message) => heard.push(`${message.channel} ${message.payload}`));
    await listener.query('LISTEN mcp_task_changes');
    await listener.query('LISTEN mcp_task_lease_changes');
    /** Requests the cancel of a new task; resolves with what both channels said of it. */
    const cancelHeard = async (): Promise<string[]> => {
      const id = newTaskId();
      await sql`
        INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments)
        VALUES (${id}, 'acme', 'alice', 'tools/call', 'tool', '{}')`.execute(db);
      await sql`UPDATE tasks SET cancel_requested_at = now() WHERE id = ${id}`.execute(db);
      // The general channel always announces a cancel request: once it came, the other had too.
      const deadline = Date.now() + 10_000;
      while (!heard.includes(`mcp_task_changes ${id}`) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 10));
      await listener.query('SELECT 1'); // a round trip: anything sent before it is delivered
      return heard.filter((line) => line.endsWith(` ${id}`)).map((line) => line.split(' ')[0]!);
    };
    expect(await cancelHeard()).toEqual(['mcp_task_changes', 'mcp_task_lease_changes']);
    await MIGRATIONS['0025_lease_changes_channel']!.down!(db);
    expect(await cancelHeard()).toEqual(['mcp_task_changes']);
    await MIGRATIONS['0025_lease_changes_channel']!.up(db);
    expect(await cancelHeard()).toEqual(['mcp_task_changes', 'mcp_task_lease_changes']);
  });

  it('replaces the INVALID index a crashed concurrent build left, and completes', async () => {
    const { db } = await freshDatabase('migrate_invalid_index');
    await migrateTo(db, '0010_fair_queue');
    await fillCompletedTasks(db, 100);
    // A concurrent build that failed half way leaves its index behind, INVALID (here: UNIQUE
    // over duplicate tenants; a crash or a cancelled deploy leaves the same).
    await expect(
      sql`CREATE UNIQUE INDEX CONCURRENTLY tasks_in_flight_by_tenant ON tasks (tenant)`.execute(db),
    ).rejects.toThrow(/could not create unique index/);
    expect(await indexState(db, 'tasks_in_flight_by_tenant')).toEqual([
      {
        definition:
          'CREATE UNIQUE INDEX tasks_in_flight_by_tenant ON public.tasks USING btree (tenant)',
        valid: false,
      },
    ]);

    expect((await migrateToLatest(db)).applied[0]).toBe('0011_in_flight_by_tenant');
    expect(await indexState(db, 'tasks_in_flight_by_tenant')).toEqual([
      {
        definition:
          "CREATE INDEX tasks_in_flight_by_tenant ON public.tasks USING btree (tenant) WHERE (status = ANY (ARRAY['working'::text, 'input_required'::text]))",
        valid: true,
      },
    ]);
  });

  it('lets another connection write to tasks while a migration builds an index on it', async () => {
    const { database, db } = await freshDatabase('migrate_online_index');
    await migrateTo(db, '0012_steps_saved');
    await fillCompletedTasks(db, 300_000);
    const writer = createDb({ connectionString: database.connectionString, max: 1 });
    cleanups.push(() => writer.destroy());

    let migrationDoneAt = 0;
    const migration = migrateTo(db, '0017_task_events').then(() => {
      migrationDoneAt = performance.now();
    });
    // Wait until 0017 is building tasks_by_created (the first of its two indexes on tasks).
    for (;;) {
      const building = await sql<{ command: string }>`
        SELECT command FROM pg_stat_progress_create_index
        WHERE relid = to_regclass('tasks') AND datname = current_database()`.execute(writer);
      if (building.rows.length > 0) {
        expect(building.rows[0]!.command).toBe('CREATE INDEX CONCURRENTLY');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const id = newTaskId();
    await sql`
      INSERT INTO tasks (id, tenant, principal, method, tool_name, arguments)
      VALUES (${id}, 't', 'p', 'tools/call', 'tool', '{}')`.execute(writer);
    await sql`UPDATE tasks SET status_message = 'on it' WHERE id = ${id}`.execute(writer);
    const writeDoneAt = performance.now();
    await migration;

    expect(writeDoneAt).toBeLessThan(migrationDoneAt);
    expect(await indexState(db, 'tasks_by_tenant_created')).toEqual([
      {
        definition:
          'CREATE INDEX tasks_by_tenant_created ON public.tasks USING btree (tenant, created_at, id)',
        valid: true,
      },
    ]);
  });
});
