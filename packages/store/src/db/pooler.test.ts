import {
  pgBouncerUnavailableReason,
  skipUnlessEngine,
  startPgBouncer,
  type PgBouncer,
} from '@mcp-tasks/testing';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alice, createStoreFixture, newTask, type StoreFixture } from '../../test/helpers.js';
import { createDb, type Db } from './database.js';
import { describePoolerRefusal, statementTimeoutProblem } from './pooler-checks.js';
import { createTask } from '../rows/task-repository.js';
import { getTaskViewForPrincipal } from '../service/task-view.js';

/**
 * The store through a real PgBouncer 1.18 in transaction mode (issue 26, part 1): what it refuses,
 * what it silently drops, and the statement bound that survives it.
 */
const skip = skipUnlessEngine('PgBouncer', pgBouncerUnavailableReason());

describe.skipIf(skip)('the store behind PgBouncer in transaction mode', () => {
  let fixture: StoreFixture;
  let bouncer: PgBouncer;
  /** Drops statement_timeout from the startup packet instead of refusing it. */
  let lenient: PgBouncer;
  const opened: Db[] = [];
  const open = (url: string, options: Partial<Parameters<typeof createDb>[0]> = {}): Db => {
    const db = createDb({ connectionString: url, max: 4, ...options });
    opened.push(db);
    return db;
  };

  beforeAll(async () => {
    fixture = await createStoreFixture('pooler');
    bouncer = await startPgBouncer({ target: fixture.database.connectionString });
    lenient = await startPgBouncer({
      target: fixture.database.connectionString,
      ignoreStartupParameters: ['extra_float_digits', 'statement_timeout'],
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled(opened.map((db) => db.destroy()));
    await bouncer?.destroy();
    await lenient?.destroy();
    await fixture?.close();
  });

  const setDatabaseTimeout = async (value: string): Promise<void> => {
    const admin = new pg.Client({ connectionString: fixture.database.connectionString });
    await admin.connect();
    try {
      await admin.query(
        `ALTER DATABASE "${fixture.database.name}" SET statement_timeout = '${value}'`,
      );
    } finally {
      await admin.end();
    }
  };

  it('refuses the statement_timeout a pool sends at connect, and the start-up says what to set', async () => {
    const db = open(bouncer.urlFor(fixture.database.connectionString));
    const error = await sql`SELECT 1`.execute(db).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as Error).message).toBe('unsupported startup parameter: statement_timeout');
    expect(describePoolerRefusal('DATABASE_URL', error)).toBe(
      'DATABASE_URL: the server refused a connection setting (unsupported startup parameter: statement_timeout): it is a pooler such as PgBouncer. Set DATABASE_POOLER=transaction (and DATABASE_DIRECT_URL for the session work), see docs/deployment.md',
    );
  });

  it('notices a pooler that dropped the timeout sent at connect', async () => {
    const db = open(lenient.urlFor(fixture.database.connectionString));
    expect(await statementTimeoutProblem(db, { variable: 'DATABASE_URL', pooler: 'none' })).toBe(
      "DATABASE_URL: statements run with statement_timeout=0 ms, not the 10000 ms sent at connect: a pooler in front dropped it (PgBouncer's ignore_startup_parameters). Set DATABASE_POOLER=transaction and DATABASE_DIRECT_URL, and give the database its own bound (docs/deployment.md)",
    );
    // The same check on Postgres itself finds the bound it sent.
    const direct = open(fixture.database.connectionString);
    expect(
      await statementTimeoutProblem(direct, { variable: 'DATABASE_URL', pooler: 'none' }),
    ).toBeUndefined();
  });

  it('refuses DATABASE_POOLER=transaction while the database has no bound of its own', async () => {
    await setDatabaseTimeout('0');
    const db = open(bouncer.urlFor(fixture.database.connectionString), { pooler: 'transaction' });
    expect(
      await statementTimeoutProblem(db, { variable: 'DATABASE_URL', pooler: 'transaction' }),
    ).toBe(
      "DATABASE_URL: DATABASE_POOLER=transaction and the server's statement_timeout is 0 (none), so a hung statement would wait for ever; set a bound where the pooler cannot drop it: ALTER DATABASE <name> SET statement_timeout = '10s' (or ALTER ROLE … SET), see docs/deployment.md",
    );
  });

  it('cuts a long statement at the database bound through the pooler (57014)', async () => {
    await setDatabaseTimeout('1s');
    // New server connections only: the pooler's old ones keep the setting they started with.
    await bouncer.restart();
    const db = open(bouncer.urlFor(fixture.database.connectionString), { pooler: 'transaction' });
    expect(
      await statementTimeoutProblem(db, { variable: 'DATABASE_URL', pooler: 'transaction' }),
    ).toBeUndefined();
    const error = await sql`SELECT pg_sleep(5)`.execute(db).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as { code?: string }).code).toBe('57014');
    expect((error as Error).message).toBe('canceling statement due to statement timeout');
  });

  it('runs the hot statements unnamed through the pooler, from many connections at once', async () => {
    const db = open(bouncer.urlFor(fixture.database.connectionString), {
      pooler: 'transaction',
      max: 8,
    });
    const created = await Promise.all(
      Array.from({ length: 40 }, async () => (await createTask(db, newTask())).task.id),
    );
    const views = await Promise.all(
      created.map((id) => getTaskViewForPrincipal(db, alice.tenant, alice.principal, id)),
    );
    expect(views.map((view) => view?.id)).toEqual(created);
    const { rows } = await sql<{
      count: string;
    }>`SELECT count(*)::text AS count FROM pg_prepared_statements`.execute(db);
    expect(rows[0]?.count).toBe('0');
  });
});
