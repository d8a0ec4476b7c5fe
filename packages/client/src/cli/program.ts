import { Command, CommanderError, Option } from 'commander';
import { ConnectionError, HttpError, InputRequiredError, McpError } from '../errors.js';
import type { TaskHandle } from '../task-handle.js';
import type { InputHandler, InputResponses, TaskSnapshot } from '../types.js';
import { buildToolArguments, collectArg } from './arguments.js';
import { canPrompt, connect, type ConnectionOptions } from './context.js';
import { CliExit, ExitCode, exitCodeForStatus } from './exit-codes.js';
import { describeOutcome, describeSnapshot, printJson, statusLine } from './output.js';
import { promptAll } from './prompts.js';

const EXIT_CODES_HELP = `
Exit codes:
  0  completed (or the command succeeded)
  1  the task failed, or the tool answered isError
  2  usage error
  3  the task was cancelled
  4  input is needed and cannot be asked here (--detach, --no-input, --json, no terminal)
  5  connection error (nothing answered at --url)
  6  the server refused the request (unknown task, bad arguments, bad token, …)

Environment: MCP_URL, MCP_TOKEN, MCP_TASKS_STATE_DIR (handle store, default ~/.local/state/mcp-tasks).`;

function withConnection(command: Command): Command {
  return command
    .addOption(new Option('--url <url>', 'MCP endpoint').env('MCP_URL'))
    .addOption(new Option('--token <token>', 'bearer token').env('MCP_TOKEN'))
    .addOption(new Option('--state-dir <dir>', 'where unfinished task handles are kept'));
}

function withJson(command: Command): Command {
  return command.option('--json', 'print JSON for scripts (no prompts, no spinner)');
}

interface FollowOptions extends ConnectionOptions {
  poll?: boolean;
  /** Stop with exit 4 when input is needed and cannot be prompted for (call, resume). */
  exitOnInput?: boolean;
}

/** Follows one task to its end with a status line; prompts for input when it can. */
async function follow(handle: TaskHandle, options: FollowOptions): Promise<TaskSnapshot> {
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
        line.update(`${handle.taskId} ${describeSnapshot(snapshot)}`);
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

function report(snapshot: TaskSnapshot, options: { json?: boolean }): ExitCode {
  if (options.json) printJson(snapshot);
  else if (snapshot.status === 'input_required') {
    process.stderr.write(`answer with: mcp-tasks answer ${snapshot.taskId}\n`);
  } else {
    const text = describeOutcome(snapshot);
    if (text !== '') process.stdout.write(`${text}\n`);
  }
  return exitCodeForStatus(snapshot);
}

function describeError(error: unknown): string {
  if (error instanceof McpError)
    return `error ${error.code} (HTTP ${error.httpStatus}): ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
}

export function buildProgram(setExit: (code: ExitCode) => void): Command {
  const program = new Command('mcp-tasks')
    .description(
      'Call MCP tools that run as durable tasks; follow, answer, cancel and resume them.',
    )
    .version('0.1.0')
    .showHelpAfterError()
    .addHelpText('after', EXIT_CODES_HELP)
    .exitOverride();

  withJson(withConnection(program.command('discover')))
    .description('server/discover: versions, capabilities, server info')
    .action(async (options: ConnectionOptions) => {
      const result = await connect(options).discover();
      printJson(result);
    });

  withJson(withConnection(program.command('tools')))
    .description('tools/list: the tools this endpoint offers')
    .action(async (options: ConnectionOptions) => {
      const tools = await connect(options).listTools();
      if (options.json) return printJson(tools);
      for (const tool of tools) {
        process.stdout.write(`${tool.name}  ${tool.description ?? tool.title ?? ''}\n`);
      }
    });

  withJson(withConnection(program.command('call')))
    .description('tools/call: run a tool; follows the task to its end unless --detach')
    .argument('<tool>', 'tool name')
    .option('--arg <key=value>', 'one argument (repeatable); typed by the tool schema', collectArg)
    .option('--args-json <json>', 'all arguments as one JSON object')
    .option('--detach', 'print the task id and exit 0 once the task exists')
    .option('--no-input', 'never prompt; exit 4 when input is needed')
    .option('--poll', 'follow by polling instead of a subscription')
    .action(
      async (
        tool: string,
        options: FollowOptions & { arg?: [string, string][]; argsJson?: string; detach?: boolean },
      ) => {
        const client = connect(options);
        const pairs = options.arg ?? [];
        const schema =
          pairs.length > 0 ? (await client.listTools()).find((t) => t.name === tool) : undefined;
        const args = buildToolArguments(pairs, options.argsJson, schema);
        const interactive = canPrompt(options) && !options.detach;
        let outcome;
        try {
          outcome = await client.callTool(tool, args, interactive ? { onInput: promptAll } : {});
        } catch (error) {
          if (error instanceof InputRequiredError) {
            if (options.json)
              printJson({ resultType: 'input_required', inputRequests: error.inputRequests });
            else
              process.stderr.write(
                `${error.message}; run without --detach/--no-input on a terminal\n`,
              );
            return setExit(ExitCode.InputRequired);
          }
          throw error;
        }
        if (outcome.kind === 'complete') {
          if (options.json) printJson(outcome.result);
          else
            process.stdout.write(
              `${describeOutcome({ taskId: '', status: 'completed', result: outcome.result })}\n`,
            );
          return setExit(outcome.result.isError === true ? ExitCode.Failed : ExitCode.Completed);
        }
        if (options.detach) {
          if (options.json) printJson(outcome.created);
          else process.stdout.write(`${outcome.created.taskId}\n`);
          return;
        }
        if (!options.json) process.stderr.write(`task ${outcome.created.taskId}\n`);
        setExit(report(await follow(outcome.handle, { ...options, exitOnInput: true }), options));
      },
    );

  withJson(withConnection(program.command('get')))
    .description('tasks/get: print one snapshot (exit code from its status; 0 while working)')
    .argument('<taskId>')
    .action(async (taskId: string, options: ConnectionOptions) => {
      const snapshot = await connect(options).task(taskId).get();
      if (options.json) printJson(snapshot);
      else {
        process.stdout.write(`${taskId} ${describeSnapshot(snapshot)}\n`);
        if (snapshot.status === 'completed' || snapshot.status === 'failed') {
          process.stdout.write(`${describeOutcome(snapshot)}\n`);
        }
      }
      setExit(exitCodeForStatus(snapshot));
    });

  withJson(withConnection(program.command('watch')))
    .description('follow a task live (subscription, polling fallback) until it ends')
    .argument('<taskId>')
    .option('--poll', 'poll instead of subscribing')
    .option('--input', 'prompt for input requests while watching (default: leave them to `answer`)')
    .action(async (taskId: string, options: FollowOptions) => {
      const client = connect(options);
      // Watching never exits for input: someone else (another terminal, `answer`) may give it.
      const final = await follow(client.task(taskId), {
        ...options,
        input: options.input === true,
      });
      setExit(report(final, options));
    });

  withConnection(program.command('answer'))
    .description('tasks/update: answer what the task asks, by prompts or --json')
    .argument('<taskId>')
    .option(
      '--json <answers>',
      'inputResponses as JSON: {"key": {"action": "accept", "content": {…}}}',
    )
    .action(async (taskId: string, options: ConnectionOptions & { json?: string }) => {
      const handle = connect(options).task(taskId);
      let answers: InputResponses;
      if (options.json !== undefined) {
        try {
          answers = JSON.parse(options.json) as InputResponses;
        } catch (error) {
          throw new CliExit(ExitCode.Usage, `--json is not JSON: ${(error as Error).message}`);
        }
        if (typeof answers !== 'object' || answers === null || Array.isArray(answers)) {
          throw new CliExit(
            ExitCode.Usage,
            '--json must be an object of input keys to ElicitResults',
          );
        }
      } else {
        const snapshot = await handle.get();
        if (snapshot.status !== 'input_required') {
          process.stderr.write(`${taskId} is ${describeSnapshot(snapshot)}: nothing to answer\n`);
          return setExit(exitCodeForStatus(snapshot));
        }
        if (!process.stdin.isTTY) {
          throw new CliExit(ExitCode.InputRequired, "no terminal to prompt on: pass --json '{…}'");
        }
        answers = await promptAll(snapshot.inputRequests ?? {});
      }
      await handle.update(answers);
      process.stderr.write(`answered ${Object.keys(answers).join(', ')}\n`);
    });

  withJson(withConnection(program.command('cancel')))
    .description('tasks/cancel: ask the task to stop')
    .argument('<taskId>')
    .action(async (taskId: string, options: ConnectionOptions) => {
      await connect(options).task(taskId).cancel();
      if (options.json) printJson({ taskId, cancelRequested: true });
      else process.stderr.write(`cancel requested for ${taskId}\n`);
    });

  withJson(withConnection(program.command('resume')))
    .description('continue every unfinished task this client started (kept in the handle store)')
    .option('--no-input', 'never prompt; a task that needs input ends with exit 4')
    .option('--poll', 'poll instead of subscribing')
    .action(async (options: FollowOptions) => {
      const client = connect(options);
      const handles = await client.unfinished();
      if (handles.length === 0) {
        if (options.json) printJson([]);
        else process.stderr.write('no unfinished tasks\n');
        return;
      }
      let code: ExitCode = ExitCode.Completed;
      const finals: TaskSnapshot[] = [];
      for (const handle of handles) {
        if (!options.json) process.stderr.write(`resuming ${handle.taskId}\n`);
        const final = await follow(handle, { ...options, exitOnInput: true });
        finals.push(final);
        const taskCode = options.json ? exitCodeForStatus(final) : report(final, options);
        if (code === ExitCode.Completed) code = taskCode;
      }
      if (options.json) printJson(finals);
      setExit(code);
    });

  return program;
}

/** Runs the CLI and answers its exit code; never calls process.exit, so output is flushed. */
export async function runCli(argv: string[]): Promise<number> {
  let code: ExitCode = ExitCode.Completed;
  const program = buildProgram((c) => (code = c));
  try {
    await program.parseAsync(argv);
    return code;
  } catch (error) {
    return exitFor(error);
  }
}

function exitFor(error: unknown): ExitCode {
  if (error instanceof CommanderError) {
    // --help and --version end here with code 0.
    return error.exitCode === 0 ? ExitCode.Completed : ExitCode.Usage;
  }
  if (error instanceof CliExit) {
    if (error.message !== '') process.stderr.write(`mcp-tasks: ${error.message}\n`);
    return error.code;
  }
  if (error instanceof ConnectionError) {
    process.stderr.write(`mcp-tasks: ${error.message}\n`);
    return ExitCode.Connection;
  }
  if (error instanceof McpError) {
    process.stderr.write(`mcp-tasks: ${describeError(error)}\n`);
    return ExitCode.ServerError;
  }
  if (error instanceof HttpError) {
    process.stderr.write(`mcp-tasks: ${error.message}\n`);
    return error.status >= 500 ? ExitCode.Connection : ExitCode.ServerError;
  }
  if (error instanceof Error && error.name === 'ExitPromptError') {
    process.stderr.write('mcp-tasks: prompt closed\n');
    return ExitCode.InputRequired;
  }
  process.stderr.write(
    `mcp-tasks: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return ExitCode.Failed;
}
