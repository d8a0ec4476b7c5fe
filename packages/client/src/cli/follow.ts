import { McpError } from '../errors.js';
import type { TaskHandle } from '../task-handle.js';
import { isTerminal, type InputHandler, type TaskSnapshot } from '../types.js';
import { canPrompt } from './context.js';
import { CliExit, ExitCode, exitCodeForStatus } from './exit-codes.js';
import type { FollowOptions } from './options.js';
import { describeOutcome, describeSnapshot, printJson, statusLine } from './output.js';
import { promptAll } from './prompts.js';

/** Follows one task to its end with a status line; prompts for input when it can. */
export async function follow(handle: TaskHandle, options: FollowOptions): Promise<TaskSnapshot> {
  const line = statusLine(!options.json);
  const interactive = canPrompt(options);
  let needsInput: TaskSnapshot | undefined;
  const stopForInput = new AbortController();
  const onInput: InputHandler = async (requests) => {
    line.stop(`${handle.taskId} needs input`, true);
    return promptAll(requests);
  };
  try {
    const final = await handle.wait({
      via: options.poll ? 'poll' : 'subscribe',
      signal: stopForInput.signal,
      ...(interactive ? { onInput } : {}),
      onUpdate(snapshot) {
        // The end is drawn once by `stop`; a spinner frame for it would be left on screen.
        if (!isTerminal(snapshot)) line.update(`${handle.taskId} ${describeSnapshot(snapshot)}`);
        if (!interactive && options.exitOnInput && snapshot.status === 'input_required') {
          needsInput = snapshot;
          stopForInput.abort(new CliExit(ExitCode.InputRequired));
        }
      },
      onRetry(error, delayMs) {
        line.update(
          `${handle.taskId} ${describeError(error)}; retrying in ${Math.round(delayMs)} ms`,
        );
      },
    });
    line.stop(`${handle.taskId} ${describeSnapshot(final)}`, final.status === 'completed');
    return final;
  } catch (error) {
    if (needsInput !== undefined) {
      line.stop(`${handle.taskId} ${describeSnapshot(needsInput)}`, false);
      return needsInput;
    }
    throw error;
  }
}

/** Prints a task's end (or how to answer it) and answers the exit code for it. */
export function report(snapshot: TaskSnapshot, options: { json?: boolean }): ExitCode {
  if (options.json) printJson(snapshot);
  else if (snapshot.status === 'input_required') {
    process.stderr.write(`answer with: mcp-tasks answer ${snapshot.taskId}\n`);
  } else {
    const text = describeOutcome(snapshot);
    if (text !== '') process.stdout.write(`${text}\n`);
  }
  return exitCodeForStatus(snapshot);
}

export function describeError(error: unknown): string {
  if (error instanceof McpError)
    return `error ${error.code} (HTTP ${error.httpStatus}): ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
}
