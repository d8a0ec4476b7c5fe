import { startToolStack, type ToolStack } from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerDb, type LedgerDb } from './ledger-db.js';

/**
 * transfer_funds through the real product: a gateway process and worker processes loading this
 * package through MCP_TOOL_MODULES, the ledger in the service's own database, HTTP all the way.
 * Steps hold their transaction open after writing (`holdMs`), so a worker can be killed or
 * frozen with a transfer written but not committed.
 */
let stack: ToolStack;
let ledger: LedgerDb;
const ACCOUNTS = { alice: 1_000, bob: 1_000, carol: 1_000 };
const TOTAL = 3_000;

beforeAll(async () => {
  stack = await startToolStack({
    label: 'ledger_e2e',
    toolModules: ['./examples/ledger/src/index.ts'],
  });
  ledger = await createLedgerDb('ledger_e2e', ACCOUNTS, stack.database);
}, 120_000);
afterAll(async () => {
  await ledger?.close();
  await stack?.stop();
});

const THREE = [
  { from: 'alice', to: 'bob', amount: 10 },
  { from: 'bob', to: 'carol', amount: 20 },
  { from: 'carol', to: 'alice', amount: 30 },
];

/** Until a worker's session sits in a step transaction right after writing transfer `step`. */
async function waitForOpenTransfer(taskId: string, step: number): Promise<number> {
  for (let i = 0; i < 600; i += 1) {
    const { rows } = await ledger.pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
       WHERE datname = current_database() AND state = 'idle in transaction'
         AND query LIKE 'INSERT INTO ledger.transfers%'`,
    );
    const progress = await stack.getTask(taskId);
    if (rows.length > 0 && progress.statusMessage === `Transferred ${step} of 3`)
      return rows[0]!.pid;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no open transaction for transfer ${step} of ${taskId}`);
}

async function expectExactlyThree(taskId: string): Promise<void> {
  expect((await ledger.transfers(taskId)).map((t) => `${t.key} ${t.move}`)).toEqual([
    `${taskId}:0 alice->bob 10`,
    `${taskId}:1 bob->carol 20`,
    `${taskId}:2 carol->alice 30`,
  ]);
  const balances = await ledger.balances();
  expect(Object.values(balances).reduce((a, b) => a + b, 0)).toBe(TOTAL);
}

describe('transfer_funds end to end (gateway + worker processes, loaded from MCP_TOOL_MODULES)', () => {
  it('completes over HTTP with each transfer recorded once', async () => {
    const created = await stack.callTool('transfer_funds', { transfers: THREE });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = created.taskId as string;
    expect(await stack.waitForTask(taskId, undefined, 30_000)).toMatchObject({
      status: 'completed',
      statusMessage: 'Transferred 3 of 3',
      result: { structuredContent: { transferred: 3, requested: 3 } },
    });
    await expectExactlyThree(taskId);
  });

  it('survives kill -9 mid-transaction: the uncommitted transfer is gone and applied once by the next worker', async () => {
    const created = await stack.callTool('transfer_funds', { transfers: THREE, holdMs: 1_500 });
    const taskId = created.taskId as string;
    await waitForOpenTransfer(taskId, 1);
    const [victim] = stack.workers.filter((w) => w.child.exitCode === null);
    victim!.kill('SIGKILL');
    await victim!.exited;
    expect((await ledger.transfers(taskId)).map((t) => t.step)).toEqual([0]);
    await stack.startWorker();
    expect(await stack.waitForTask(taskId, undefined, 60_000)).toMatchObject({
      status: 'completed',
    });
    await expectExactlyThree(taskId);
  });

  it('lets a worker frozen mid-transaction past its lease commit nothing when it thaws', async () => {
    const created = await stack.callTool('transfer_funds', { transfers: THREE, holdMs: 1_000 });
    const taskId = created.taskId as string;
    await waitForOpenTransfer(taskId, 1);
    const running = stack.workers.filter((w) => w.child.exitCode === null);
    const frozen = running[0]!;
    frozen.kill('SIGSTOP');
    const other = await stack.startWorker();
    try {
      // The other worker takes over once the lease (2 s) runs out, after Postgres ended the
      // frozen session's idle transaction and freed the accounts it had locked.
      expect(await stack.waitForTask(taskId, undefined, 60_000)).toMatchObject({
        status: 'completed',
      });
    } finally {
      frozen.kill('SIGCONT');
    }
    // Thawed, the frozen worker finds its transaction gone: nothing more is written.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await expectExactlyThree(taskId);
    expect(other.child.exitCode).toBeNull();
  });
});
