import type { InputResponses, JsonObject, JsonValue } from '@mcp-tasks/tool-sdk';
import type { StepContext, StepOutcome, ToolDefinition } from '@mcp-tasks/tool-sdk';

/** Drives a task program directly, the way the worker would, minus Postgres. */
export function context(
  inputResponses: InputResponses = {},
  signal: StepContext['signal'] = new AbortController().signal,
): StepContext {
  return {
    taskId: 'test-task',
    stepIndex: 0,
    idempotencyKey: 'test-task:0',
    signal,
    inputResponses,
    settings: { reportStepMs: 0 },
    transaction: () => Promise.reject(new Error('these tools run no transaction')),
  };
}

export interface Run {
  outcomes: StepOutcome[];
  last: StepOutcome;
  state: JsonValue;
}

/** Steps until the program stops at input, completes or cancels. */
export async function runUntilStop(
  tool: ToolDefinition,
  args: JsonObject,
  state: JsonValue,
  ctx: StepContext,
): Promise<Run> {
  const program = tool.task;
  if (program === undefined) throw new Error(`${tool.name} has no task program`);
  const outcomes: StepOutcome[] = [];
  for (let i = 0; i < 100; i += 1) {
    const outcome = await program.step(state, args, ctx);
    outcomes.push(outcome);
    if (outcome.kind === 'continue') {
      state = outcome.state;
      continue;
    }
    if (outcome.kind === 'input') state = outcome.state;
    return { outcomes, last: outcome, state };
  }
  throw new Error('program did not stop within 100 steps');
}
