import { startBenchStack, type StackCostOptions } from './bench-stack.js';
import { runConstantRate, type ConstantRateResult } from './constant-rate.js';
import { runEndToEnd, type EndToEndResult, type TaskLifecycle } from './end-to-end.js';
import { createTaskRequest, sendMcp } from './mcp-requests.js';
import { approval, creatingCall, followAndAnswer, labelRound } from './realistic-requests.js';
import { REALISTIC_TOOL_MODULE } from '@mcp-tasks/tools/bench';

const log = (line: string) => console.error(`[bench] ${line}`);

export interface RealisticMixResult {
  /** The one-step no-input task (failing_job) on the same stack, just before. */
  plain: EndToEndResult;
  /** MRTR round, task, step, input pause answered, two more steps; a listen watcher on 1 in 3. */
  realistic: EndToEndResult;
  /** The task-creating call (the MRTR retry with its answer) at a fixed rate. */
  createAtFixedRate: ConstantRateResult;
}

function requestStateOf(result: Record<string, unknown>): string {
  if (result.resultType !== 'input_required' || typeof result.requestState !== 'string')
    throw new Error(`expected an MRTR round, got ${JSON.stringify(result)}`);
  return result.requestState;
}

/**
 * One user's task: the MRTR round and its retry create the task on one gateway; one task in
 * three is followed by a `subscriptions/listen` watcher on the other gateway, which answers the
 * pause when a pushed snapshot shows it and ends at the terminal snapshot; the others learn of
 * the pause and the end from the bench's Postgres watcher (as the plain line does), and answer.
 */
export const realisticLifecycle: TaskLifecycle = async ({ gateway, other, watcher, turn }) => {
  const round = await sendMcp(gateway.url, labelRound(), gateway.pool);
  const created = await sendMcp(
    gateway.url,
    creatingCall(requestStateOf(round), turn),
    gateway.pool,
  );
  const taskId = created.taskId as string;
  if (turn % 3 === 0) {
    await followAndAnswer(other.url, other.pool, taskId);
    // The stream ends at the terminal snapshot; the watcher makes the count the same as others'.
    await watcher.waitFor(taskId);
    return;
  }
  await watcher.waitFor(taskId, ['input_required']);
  await sendMcp(gateway.url, approval(taskId), gateway.pool);
  await watcher.waitFor(taskId);
};

/**
 * The workload users run (issue 30) against the no-input line, one after the other on the same
 * 1 + 1 stack, then the creating call's latency at the fixed create rate.
 */
export async function runRealisticMix(
  options: StackCostOptions & { ratePerS: number },
): Promise<RealisticMixResult> {
  const stack = await startBenchStack({
    ...options.stackOptions,
    gateways: 1,
    workers: 1,
    env: { MCP_TOOL_MODULES: REALISTIC_TOOL_MODULE },
  });
  options.stacks.push(stack);
  try {
    // runEndToEnd takes what it needs of the same-stack options.
    const e2e = { ...options, stack };
    const plain = await runEndToEnd({ ...e2e, request: createTaskRequest });
    log(`(e) no-input 1+1: ${plain.tasksPerS.toFixed(1)} tasks/s`);
    const realistic = await runEndToEnd({ ...e2e, lifecycle: realisticLifecycle });
    log(
      `(e) realistic mix 1+1: ${realistic.tasksPerS.toFixed(1)} tasks/s (${(realistic.tasksPerS / plain.tasksPerS).toFixed(2)}× no-input)`,
    );
    const gatewayUrl = stack.gateways[0]!.url;
    // A requestState is bound to the caller, tool and arguments, not to one use: one round
    // serves every create of the fixed-rate run, which then times the creating call alone.
    const requestState = requestStateOf(await sendMcp(gatewayUrl, labelRound()));
    let turn = 0;
    const fixedRate = (durationS: number) =>
      runConstantRate({
        baseUrl: gatewayUrl,
        request: () => creatingCall(requestState, turn++),
        ratePerS: options.ratePerS,
        durationS,
        isSuccess: (body) => body.includes('"resultType":"task"'),
      });
    await fixedRate(options.warmupS);
    const createAtFixedRate = await fixedRate(options.durationS);
    log(
      `(d) realistic create at ${options.ratePerS}/s: p50 ${createAtFixedRate.latency.p50.toFixed(2)} ms, p99 ${createAtFixedRate.latency.p99.toFixed(2)} ms, failures ${JSON.stringify(createAtFixedRate.failureReasons)}`,
    );
    // Those tasks park at their pause, holding no worker; the bench drops the database at the end.
    return { plain, realistic, createAtFixedRate };
  } finally {
    await stack.stop();
  }
}
