import { setTimeout as sleep } from 'node:timers/promises';
import { createLedgerSchema, openAccounts } from '@mcp-tasks/example-ledger';
import pg from 'pg';
import { mcpRequest, type HttpRequestSpec } from '../bench/mcp-requests.js';
import type { HistoryRecorder } from '../history/recorder.js';
import type { Rng } from './prng.js';

// The ledger side of the mix's `transfer_funds` lifecycles (examples/ledger): accounts opened
// before the stack starts, and the ledger read back after the load for the exactly-once check
// (check/effects.ts).

/** The built pack: the stack runs the apps' compiled output, so the pack's too. */
export const LEDGER_MODULE = './examples/ledger/dist/index.js';
const ACCOUNTS = 40;
/** Large enough that no transfer ever runs short: every step moves money. */
const OPENING_BALANCE = 1_000_000;
/** Each step holds its transaction this long after writing: a window for chaos to land in. */
const HOLD_MS = 300;

const accountId = (n: number) => `acct-${String(n).padStart(4, '0')}`;

/** One lifecycle's arguments: 1–3 transfers between distinct accounts. */
export function ledgerArguments(rng: Rng): Record<string, unknown> {
  const transfers = Array.from({ length: rng.int(1, 3) }, () => {
    const from = rng.int(0, ACCOUNTS - 1);
    const to = (from + rng.int(1, ACCOUNTS - 1)) % ACCOUNTS;
    return { from: accountId(from), to: accountId(to), amount: rng.int(1, 100) };
  });
  return { transfers, holdMs: HOLD_MS };
}

/** Creates the ledger and opens its accounts; answers the total opened. */
export async function openLedger(databaseUrl: string, accounts = ACCOUNTS): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await createLedgerSchema(client);
    await openAccounts(
      client,
      Array.from({ length: accounts }, (_, n) => ({ id: accountId(n), balance: OPENING_BALANCE })),
    );
  } finally {
    await client.end();
  }
  return accounts * OPENING_BALANCE;
}

/** The bench's transactional task: one transfer between two of `accounts` accounts (no hold). */
export function transferRequest(turn: number, accounts: number): HttpRequestSpec {
  const from = (turn * 7919) % accounts;
  const to = (from + 1 + (turn % (accounts - 1))) % accounts;
  return mcpRequest('tools/call', {
    name: 'transfer_funds',
    arguments: { transfers: [{ from: accountId(from), to: accountId(to), amount: 1 }] },
  });
}

interface TaskRow {
  id: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  steps_saved: number;
  transfers: { from: string; to: string; amount: number }[];
}

const move = (from: string, to: string, amount: number | string) => `${from}->${to} ${amount}`;

async function readLedger(databaseUrl: string, recorder: HistoryRecorder, openingTotal: number) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tasks = await client.query<TaskRow>(
      // A create withdrawn before it committed leaves a tombstone without arguments: no steps.
      `SELECT id, status, steps_saved, coalesce(arguments->'transfers', '[]') AS transfers
       FROM tasks WHERE tool_name = 'transfer_funds'`,
    );
    const rows = await client.query<{
      task_id: string;
      step: number;
      from_account: string;
      to_account: string;
      amount: string;
    }>('SELECT task_id, step, from_account, to_account, amount FROM ledger.transfers');
    const total = await client.query<{ total: string }>(
      'SELECT coalesce(sum(balance), 0)::text AS total FROM ledger.accounts',
    );
    const byTask = new Map<string, { step: number; move: string }[]>();
    for (const row of rows.rows) {
      const list = byTask.get(row.task_id) ?? [];
      list.push({ step: row.step, move: move(row.from_account, row.to_account, row.amount) });
      byTask.set(row.task_id, list);
    }
    recorder.effects({
      tasks: tasks.rows.map((task) => ({
        taskId: task.id,
        status: task.status,
        // The last step of a completed task committed with its result, not a checkpoint.
        stepsCommitted: task.steps_saved + (task.status === 'completed' ? 1 : 0),
        expected: task.transfers.map((t) => move(t.from, t.to, t.amount)),
        recorded: byTask.get(task.id) ?? [],
      })),
      openingTotal,
      closingTotal: Number(total.rows[0]?.total ?? 0),
    });
  } finally {
    await client.end();
  }
}

/** Reads the ledger into the history, retrying while Postgres is still coming back from chaos. */
export async function recordLedger(
  databaseUrl: string,
  recorder: HistoryRecorder,
  openingTotal: number,
): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await readLedger(databaseUrl, recorder, openingTotal);
    } catch (error) {
      if (attempt >= 20) throw error;
      await sleep(500);
    }
  }
}
