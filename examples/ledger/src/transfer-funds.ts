import {
  ErrorCode,
  ProtocolError,
  defineTool,
  sleep,
  textResult,
  type JsonValue,
  type StepContext,
  type StepOutcome,
  type StepTransaction,
} from '@mcp-tasks/tool-sdk';
import { z } from 'zod';

export const MAX_TRANSFERS = 100;

const TransferSchema = z
  .object({
    from: z.string().min(1),
    to: z.string().min(1),
    amount: z.number().int().positive(),
  })
  .refine((t) => t.from !== t.to, { message: 'a transfer needs two different accounts' });
export type Transfer = z.infer<typeof TransferSchema>;

const TransferArgsSchema = z.object({
  transfers: z.array(TransferSchema).min(1).max(MAX_TRANSFERS),
  /**
   * Keeps each step's transaction open this long after its writes (default 0): a window for
   * tests and the load test to interrupt a step mid-transaction. Not for production use.
   */
  holdMs: z.number().int().min(0).max(10_000).default(0),
});
type TransferArgs = z.infer<typeof TransferArgsSchema>;

/** The checkpoint, version 1: how many transfers are done. */
const StateSchema = z.object({ done: z.number().int().min(0) });

function parseState(state: JsonValue): z.infer<typeof StateSchema> {
  const parsed = StateSchema.safeParse(state);
  if (!parsed.success)
    throw new Error(`unreadable transfer_funds checkpoint: ${parsed.error.message}`);
  return parsed.data;
}

type Applied = { kind: 'moved' } | { kind: 'short'; balance: number };

/**
 * One transfer, in the step's transaction: both accounts locked in id order (so two tasks moving
 * money between the same accounts wait for each other rather than deadlock), the balances moved,
 * the transfer recorded with the step that made it. A missing account fails the task (-32602).
 */
async function applyTransfer(
  tx: StepTransaction,
  transfer: Transfer,
  ctx: StepContext,
  holdMs: number,
): Promise<Applied> {
  const { rows } = await tx.query<{ id: string; balance: string }>(
    'SELECT id, balance FROM ledger.accounts WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
    [[transfer.from, transfer.to]],
  );
  const balanceOf = (id: string) => rows.find((row) => row.id === id)?.balance;
  const from = balanceOf(transfer.from);
  for (const id of [transfer.from, transfer.to]) {
    if (balanceOf(id) === undefined)
      throw new ProtocolError(ErrorCode.InvalidParams, `no ledger account "${id}"`);
  }
  if (Number(from) < transfer.amount) return { kind: 'short', balance: Number(from) };
  await tx.query(
    `UPDATE ledger.accounts SET balance = balance + CASE WHEN id = $1 THEN -$3::bigint ELSE $3::bigint END
     WHERE id IN ($1, $2)`,
    [transfer.from, transfer.to, transfer.amount],
  );
  await tx.query(
    `INSERT INTO ledger.transfers (task_id, step, idempotency_key, from_account, to_account, amount)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [ctx.taskId, ctx.stepIndex, ctx.idempotencyKey, transfer.from, transfer.to, transfer.amount],
  );
  if (holdMs > 0) await sleep(holdMs, ctx.signal);
  return { kind: 'moved' };
}

function summary(args: TransferArgs, done: number): JsonValue {
  return { transferred: done, requested: args.transfers.length };
}

async function step(raw: JsonValue, args: TransferArgs, ctx: StepContext): Promise<StepOutcome> {
  const { done } = parseState(raw);
  const transfer = args.transfers[done];
  if (transfer === undefined) throw new Error(`transfer_funds checkpoint past the end: ${done}`);
  const applied = await ctx.transaction((tx) => applyTransfer(tx, transfer, ctx, args.holdMs));
  if (applied.kind === 'short') {
    return {
      kind: 'complete',
      result: {
        ...textResult(
          `Stopped after ${done} of ${args.transfers.length} transfers: account "${transfer.from}" holds ${applied.balance}, transfer ${done + 1} needs ${transfer.amount}.`,
        ),
        structuredContent: summary(args, done) as Record<string, JsonValue>,
        isError: true,
      },
      statusMessage: `Insufficient funds in "${transfer.from}"`,
    };
  }
  const next = done + 1;
  const message = `Transferred ${next} of ${args.transfers.length}`;
  if (next < args.transfers.length)
    return { kind: 'continue', state: { done: next }, statusMessage: message };
  return {
    kind: 'complete',
    result: {
      ...textResult(`${message}.`),
      structuredContent: summary(args, next) as Record<string, JsonValue>,
    },
    statusMessage: message,
  };
}

export const transferFunds = defineTool<TransferArgs>({
  name: 'transfer_funds',
  title: 'Transfer funds',
  description:
    'Moves money between ledger accounts, one transfer per step; each transfer is applied exactly once, even across crashes and worker takeovers.',
  inputSchema: {
    type: 'object',
    properties: {
      transfers: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_TRANSFERS,
        items: {
          type: 'object',
          properties: {
            from: { type: 'string' },
            to: { type: 'string' },
            amount: { type: 'integer', minimum: 1 },
          },
          required: ['from', 'to', 'amount'],
        },
      },
      holdMs: { type: 'integer', minimum: 0, maximum: 10_000 },
    },
    required: ['transfers'],
  },
  arguments: TransferArgsSchema,
  mode: 'task',
  task: {
    initialStatusMessage: 'Transferring',
    start: () => ({ done: 0 }),
    step,
  },
});
