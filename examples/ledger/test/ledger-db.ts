import { createTestDatabase, type TestDatabase } from '@mcp-tasks/testing';
import pg from 'pg';
import { createLedgerSchema, openAccounts } from '../src/index.js';

/** The ledger's tables on a database of the test's own, with a few funded accounts. */
export interface LedgerDb {
  database: TestDatabase;
  pool: pg.Pool;
  balances(): Promise<Record<string, number>>;
  /** Every transfer recorded, in order, as `task:step from->to amount`. */
  transfers(taskId: string): Promise<{ step: number; key: string; move: string }[]>;
  close(): Promise<void>;
}

export async function createLedgerDb(
  label: string,
  accounts: Record<string, number>,
  existing?: TestDatabase,
): Promise<LedgerDb> {
  const database = existing ?? (await createTestDatabase(label));
  const pool = new pg.Pool({ connectionString: database.connectionString, max: 4 });
  await createLedgerSchema(pool);
  await openAccounts(
    pool,
    Object.entries(accounts).map(([id, balance]) => ({ id, balance })),
  );
  return {
    database,
    pool,
    async balances() {
      const { rows } = await pool.query<{ id: string; balance: string }>(
        'SELECT id, balance FROM ledger.accounts ORDER BY id',
      );
      return Object.fromEntries(rows.map((row) => [row.id, Number(row.balance)]));
    },
    async transfers(taskId) {
      const { rows } = await pool.query<{
        step: number;
        idempotency_key: string;
        from_account: string;
        to_account: string;
        amount: string;
      }>(
        `SELECT step, idempotency_key, from_account, to_account, amount FROM ledger.transfers
         WHERE task_id = $1 ORDER BY step, created_at`,
        [taskId],
      );
      return rows.map((row) => ({
        step: row.step,
        key: row.idempotency_key,
        move: `${row.from_account}->${row.to_account} ${row.amount}`,
      }));
    },
    async close() {
      await pool.end();
      if (existing === undefined) await database.drop();
    },
  };
}
