import type { StepTransaction } from '@mcp-tasks/tool-sdk';

/**
 * The ledger's tables, in their own schema of the service's database (ctx.transaction runs
 * there). `transfers` deliberately has no unique key on (task_id, step): the tests and the load
 * test count duplicates, so nothing but the step transaction may keep them out. A production
 * ledger would add `UNIQUE (idempotency_key)` as a second line of defence.
 */
export const LEDGER_SCHEMA_SQL = `
  CREATE SCHEMA IF NOT EXISTS ledger;
  CREATE TABLE IF NOT EXISTS ledger.accounts (
    id text PRIMARY KEY,
    balance bigint NOT NULL
  );
  CREATE TABLE IF NOT EXISTS ledger.transfers (
    task_id text NOT NULL,
    step integer NOT NULL,
    idempotency_key text NOT NULL,
    from_account text NOT NULL REFERENCES ledger.accounts (id),
    to_account text NOT NULL REFERENCES ledger.accounts (id),
    amount bigint NOT NULL CHECK (amount > 0),
    created_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX IF NOT EXISTS transfers_by_task ON ledger.transfers (task_id, step);
`;

/** Anything that runs SQL: a pg Pool or Client, or a step's transaction. */
export type Queryable = Pick<StepTransaction, 'query'>;

/** Creates the ledger's schema and tables if they are missing (run once, before the workers). */
export async function createLedgerSchema(db: Queryable): Promise<void> {
  await db.query(LEDGER_SCHEMA_SQL);
}

/** Opens accounts with these balances (an existing account keeps its balance). */
export async function openAccounts(
  db: Queryable,
  accounts: readonly { id: string; balance: number }[],
): Promise<void> {
  await db.query(
    `INSERT INTO ledger.accounts (id, balance)
     SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT (id) DO NOTHING`,
    [accounts.map((a) => a.id), accounts.map((a) => a.balance)],
  );
}
