import { pgHarnessDatabase, startToolTask, type ToolRun } from '@mcp-tasks/tool-sdk/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transferFunds } from '../src/index.js';
import { createLedgerDb, type LedgerDb } from './ledger-db.js';

// transfer_funds on the in-process harness, its transactions on a real Postgres.

let ledger: LedgerDb;
beforeAll(async () => {
  ledger = await createLedgerDb('ledger_harness', { alice: 100, bob: 50, carol: 0 });
});
afterAll(async () => {
  await ledger?.close();
});

const start = (args: Record<string, unknown>): ToolRun =>
  startToolTask(transferFunds, args as never, { database: pgHarnessDatabase(ledger.pool) });

describe('transfer_funds on the in-process harness', () => {
  it('moves each transfer in its own step and records it with that step’s key', async () => {
    const before = await ledger.balances();
    const run = start({
      transfers: [
        { from: 'alice', to: 'bob', amount: 30 },
        { from: 'bob', to: 'carol', amount: 20 },
      ],
    });
    expect(await run.runUntilStop()).toBe('completed');
    expect(run.result).toMatchObject({
      structuredContent: { transferred: 2, requested: 2 },
      content: [{ type: 'text', text: 'Transferred 2 of 2.' }],
    });
    expect(await ledger.transfers(run.taskId)).toEqual([
      { step: 0, key: `${run.taskId}:0`, move: 'alice->bob 30' },
      { step: 1, key: `${run.taskId}:1`, move: 'bob->carol 20' },
    ]);
    expect(await ledger.balances()).toEqual({
      alice: before.alice! - 30,
      bob: before.bob! + 10,
      carol: before.carol! + 20,
    });
  });

  it('leaves nothing of a step that crashed before its checkpoint, and applies it once on the re-run', async () => {
    const before = await ledger.balances();
    const run = start({
      transfers: [
        { from: 'alice', to: 'carol', amount: 5 },
        { from: 'carol', to: 'bob', amount: 5 },
      ],
    });
    await run.stepAndCrash();
    expect(await ledger.transfers(run.taskId)).toEqual([]);
    expect(await ledger.balances()).toEqual(before);
    expect(await run.runUntilStop()).toBe('completed');
    expect(run.stepsRun).toBe(3);
    expect((await ledger.transfers(run.taskId)).map((t) => t.move)).toEqual([
      'alice->carol 5',
      'carol->bob 5',
    ]);
    expect(await ledger.balances()).toEqual({
      ...before,
      alice: before.alice! - 5,
      bob: before.bob! + 5,
    });
  });

  it('stops with a tool error, moving nothing more, when an account runs short', async () => {
    const before = await ledger.balances();
    const run = start({
      transfers: [
        { from: 'carol', to: 'alice', amount: before.carol! },
        { from: 'carol', to: 'alice', amount: 1 },
      ],
    });
    expect(await run.runUntilStop()).toBe('completed');
    expect(run.result).toMatchObject({
      isError: true,
      structuredContent: { transferred: 1, requested: 2 },
    });
    expect(run.statusMessage).toBe('Insufficient funds in "carol"');
    expect(await ledger.transfers(run.taskId)).toHaveLength(1);
    expect((await ledger.balances()).carol).toBe(0);
  });

  it('fails the task with -32602 for an account that does not exist, writing nothing', async () => {
    const before = await ledger.balances();
    const run = start({ transfers: [{ from: 'alice', to: 'mallory', amount: 1 }] });
    expect(await run.runUntilStop()).toBe('failed');
    expect(run.error).toMatchObject({ code: -32602, message: 'no ledger account "mallory"' });
    expect(await ledger.transfers(run.taskId)).toEqual([]);
    expect(await ledger.balances()).toEqual(before);
  });

  it('refuses a transfer from an account to itself', () => {
    expect(() => start({ transfers: [{ from: 'alice', to: 'alice', amount: 1 }] })).toThrow(
      'invalid arguments for transfer_funds',
    );
  });
});
