import type { CompiledQuery, QueryResult } from 'kysely';
import type pg from 'pg';
import type { Db } from './schema.js';

/**
 * Named (server-side prepared) statements for the hot paths. An unnamed statement is parsed and
 * planned on every execution, and planning a statement on `tasks` (six partial indexes, a dozen
 * checks) costs more than running it (`packages/store/bench/planning-cost/run.sh` measures
 * both). A named statement is parsed once per connection and, after a few executions, runs a
 * cached generic plan.
 *
 * On a Db without a query log, `executePrepared` sends the named statement to the pool itself.
 * Through Kysely (a logged Db, a transaction) pg sees only the SQL text, so the name travels
 * through a registry keyed by that text: the pool's clients (wrapped by `namePreparedStatements`
 * in createDb) send any registered text as a named statement.
 *
 * A prepared statement must name its columns: after a migration adds a column, a cached plan
 * whose result would change (`SELECT *`, `RETURNING *`) fails with "cached plan must not change
 * result type" on every connection that prepared it, so such text is refused at registration.
 *
 * Behind a pooler, named statements need session pooling or PgBouncer >= 1.21 with
 * `max_prepared_statements` set (docs/deployment.md).
 */
const nameByText = new Map<string, string>();
const variantsByName = new Map<string, number>();

/** Texts one name may take (a builder query whose shape varies, e.g. an optional SET column). */
const MAX_VARIANTS_PER_NAME = 8;
const STAR = /(?:\bselect|\breturning|,)\s+(?:"?\w+"?\.)?\*|\.\*/i;

/** The statement name this text runs under, registering it on first sight; undefined: unnamed. */
function nameFor(name: string, text: string): string | undefined {
  const known = nameByText.get(text);
  if (known !== undefined) return known;
  if (STAR.test(text)) {
    throw new Error(
      `prepared statement ${name} selects or returns *: name the columns (a migration that adds one would break its cached plan)`,
    );
  }
  const variants = variantsByName.get(name) ?? 0;
  if (variants >= MAX_VARIANTS_PER_NAME) return undefined;
  variantsByName.set(name, variants + 1);
  const statementName = variants === 0 ? name : `${name}_${variants + 1}`;
  nameByText.set(text, statementName);
  return statementName;
}

/** Runs a compiled query (or a query builder) as the named statement `name`. */
export async function executePrepared<R>(
  db: Db,
  name: string,
  /** A CompiledQuery, or anything that compiles to one: a query builder, a `sql` template. */
  query: CompiledQuery<R> | { compile(db: Db): CompiledQuery<R> },
): Promise<QueryResult<R>> {
  const compiled = 'compile' in query ? query.compile(db) : query;
  const statementName = nameFor(name, compiled.sql);
  const pool = directPools.get(db);
  if (pool === undefined || statementName === undefined) return db.executeQuery(compiled);
  const { command, rowCount, rows } = await pool.query<R & pg.QueryResultRow>({
    name: statementName,
    text: compiled.sql,
    values: [...compiled.parameters],
  });
  // What Kysely's Postgres driver would have answered.
  return AFFECTS_ROWS.has(command) ? { rows, numAffectedRows: BigInt(rowCount ?? 0) } : { rows };
}

const AFFECTS_ROWS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/**
 * The pool under each Db that createDb made without a query log. A prepared statement goes to it
 * directly: Kysely's executor, connection provider and driver layers cost a poll more CPU than
 * pg itself. A logged Db (the benches count round trips with the log) and a transaction (its own
 * Kysely instance, on its one connection) go through Kysely.
 */
const directPools = new WeakMap<Db, pg.Pool>();

export function runPreparedOnPool(db: Db, pool: pg.Pool): void {
  directPools.set(db, pool);
}

type QueryCallback = (error: Error | null, result?: pg.QueryResult) => void;

/**
 * Makes a pool client send registered texts as named statements. Everything else, and every
 * query given as a config object (cursors, pg's own), passes through untouched.
 */
export function namePreparedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (first: unknown, ...rest: unknown[]) => {
    if (typeof first === 'string') {
      const name = nameByText.get(first);
      if (name !== undefined) {
        const [values, callback] = rest as [unknown[] | undefined, QueryCallback | undefined];
        return callback === undefined
          ? query({ name, text: first, values })
          : query({ name, text: first, values }, callback);
      }
    }
    return query(first, ...rest);
  };
}
