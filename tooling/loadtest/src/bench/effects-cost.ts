import { LEDGER_MODULE, openLedger, transferRequest } from '../load/ledger.js';
import { startBenchStack, type StackCostOptions } from './bench-stack.js';
import { runEndToEnd, type EndToEndResult } from './end-to-end.js';
import { createTaskRequest } from './mcp-requests.js';

const log = (line: string) => console.error(`[bench] ${line}`);

/**
 * What exactly-once step effects cost (issue 29 item 5): the end-to-end rate of a one-step task
 * without a transaction (failing_job) and of a one-step task whose step moves money in
 * `ctx.transaction` (transfer_funds with one transfer), one after the other on the same 1 + 1
 * stack. Transfers pick among many accounts, so their row locks rarely meet.
 */
export async function runEffectsCost(
  options: StackCostOptions,
): Promise<{ plain: EndToEndResult; transactional: EndToEndResult }> {
  await openLedger(options.databaseUrl, 1_000);
  const stack = await startBenchStack({
    ...options.stackOptions,
    gateways: 1,
    workers: 1,
    env: { MCP_TOOL_MODULES: LEDGER_MODULE },
  });
  options.stacks.push(stack);
  try {
    // runEndToEnd takes what it needs of the same-stack options.
    const e2e = { ...options, stack };
    const plain = await runEndToEnd({ ...e2e, request: createTaskRequest });
    log(`(e) one-step plain 1+1: ${plain.tasksPerS.toFixed(1)} tasks/s`);
    let turn = 0;
    const transactional = await runEndToEnd({
      ...e2e,
      request: () => transferRequest(turn++, 1_000),
    });
    log(`(e) one-step transactional 1+1: ${transactional.tasksPerS.toFixed(1)} tasks/s`);
    return { plain, transactional };
  } finally {
    await stack.stop();
  }
}
