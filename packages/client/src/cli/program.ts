import { Command, CommanderError } from 'commander';
import { ConnectionError, HttpError, McpError } from '../errors.js';
import { OAuthError } from '../oauth.js';
import { addCallCommand } from './commands/call.js';
import { addEndpointCommands } from './commands/endpoint.js';
import { addLoginCommands } from './commands/login.js';
import { addTaskCommands } from './commands/task.js';
import { CliExit, ExitCode } from './exit-codes.js';
import { describeError } from './follow.js';

const EXIT_CODES_HELP = `
Exit codes:
  0  completed (or the command succeeded)
  1  the task failed, or the tool answered isError
  2  usage error
  3  the task was cancelled
  4  input is needed and cannot be asked here (--detach, --no-input, --json, no terminal)
  5  connection error (nothing answered at --url)
  6  the server refused the request (unknown task, bad arguments, bad token, …)

Environment: MCP_URL, MCP_TOKEN, MCP_TASKS_STATE_DIR (handle store, default ~/.local/state/mcp-tasks),
MCP_CLIENT_ID, MCP_CLIENT_SECRET (login), MCP_TASKS_CONFIG_DIR (logins, default ~/.config/mcp-tasks),
MCP_CONSOLE_URL, MCP_CONSOLE_TOKEN (history).`;

export function buildProgram(setExit: (code: ExitCode) => void): Command {
  const program = new Command('mcp-tasks')
    .description(
      'Call MCP tools that run as durable tasks; follow, answer, cancel and resume them.',
    )
    .version('0.1.0')
    .showHelpAfterError()
    .addHelpText('after', EXIT_CODES_HELP)
    .exitOverride();

  addEndpointCommands(program);
  addCallCommand(program, setExit);
  addTaskCommands(program, setExit);
  addLoginCommands(program);
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
  if (error instanceof OAuthError) {
    // A stored login whose credentials the authorization server no longer takes, say.
    process.stderr.write(`mcp-tasks: ${error.message}; run mcp-tasks login again\n`);
    return ExitCode.ServerError;
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
