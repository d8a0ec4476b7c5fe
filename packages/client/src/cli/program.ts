import { Command, CommanderError, Option } from 'commander';
import { ConnectionError, HttpError, InputRequiredError, McpError } from '../errors.js';
import type { TaskHandle } from '../task-handle.js';
import { isTerminal, type InputHandler, type InputResponses, type TaskSnapshot } from '../types.js';
import { buildToolArguments, collectArg } from './arguments.js';
import { loginWithBrowser } from '../node/browser-login.js';
import { CredentialStore, type StoredLogin } from '../node/credential-store.js';
import { discoverAuthorization, OAuthError, requestClientCredentialsToken } from '../oauth.js';
import { canPrompt, connect, endpointUrl, type ConnectionOptions } from './context.js';
import { CliExit, ExitCode, exitCodeForStatus } from './exit-codes.js';
import { describeOutcome, describeSnapshot, printJson, statusLine } from './output.js';
import { promptAll } from './prompts.js';
import { consoleBaseUrl, describeEvent, fetchHistory } from './history.js';

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

function withConnection(command: Command): Command {
  return command
    .addOption(new Option('--url <url>', 'MCP endpoint').env('MCP_URL'))
    .addOption(new Option('--token <token>', 'bearer token').env('MCP_TOKEN'))
    .addOption(new Option('--state-dir <dir>', 'where unfinished task handles are kept'))
    .addOption(
      new Option('--config-dir <dir>', 'where logins are kept').env('MCP_TASKS_CONFIG_DIR'),
    );
}

interface LoginOptions extends ConnectionOptions {
  clientId?: string;
  clientSecret?: string;
  scope?: string;
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
      const result = await (await connect(options)).discover();
      printJson(result);
    });

  withJson(withConnection(program.command('tools')))
    .description('tools/list: the tools this endpoint offers')
    .action(async (options: ConnectionOptions) => {
      const tools = await (await connect(options)).listTools();
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
        const client = await connect(options);
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
      const snapshot = await (await connect(options)).task(taskId).get();
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
      const client = await connect(options);
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
      const handle = (await connect(options)).task(taskId);
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
      await (await connect(options)).task(taskId).cancel();
      if (options.json) printJson({ taskId, cancelRequested: true });
      else process.stderr.write(`cancel requested for ${taskId}\n`);
    });

  withJson(program.command('history'))
    .description("a task's history from the operator console (every event, oldest first)")
    .argument('<taskId>')
    .addOption(
      new Option('--console-url <url>', 'console base URL (default: --url with /console)').env(
        'MCP_CONSOLE_URL',
      ),
    )
    .addOption(
      new Option('--console-token <token>', 'console operator token').env('MCP_CONSOLE_TOKEN'),
    )
    .addOption(new Option('--url <url>', 'MCP endpoint').env('MCP_URL'))
    .action(
      async (
        taskId: string,
        options: { consoleUrl?: string; consoleToken?: string; url?: string; json?: boolean },
      ) => {
        if (options.consoleToken === undefined)
          throw new CliExit(ExitCode.Usage, 'history needs --console-token (MCP_CONSOLE_TOKEN)');
        let base: string;
        try {
          base = consoleBaseUrl(options.consoleUrl, options.url);
        } catch (error) {
          throw new CliExit(ExitCode.Usage, (error as Error).message);
        }
        const events = await fetchHistory(base, options.consoleToken, taskId);
        if (options.json) printJson(events);
        else for (const event of events) process.stdout.write(`${describeEvent(event)}\n`);
      },
    );

  withJson(withConnection(program.command('resume')))
    .description('continue every unfinished task this client started (kept in the handle store)')
    .option('--no-input', 'never prompt; a task that needs input ends with exit 4')
    .option('--poll', 'poll instead of subscribing')
    .action(async (options: FollowOptions) => {
      const client = await connect(options);
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

  withJson(withConnection(program.command('login')))
    .description(
      'log in to an endpoint with OAuth, found from its metadata: in the browser (authorization code + PKCE), or with --client-id and --client-secret; later commands use (and refresh) the token',
    )
    .addOption(new Option('--client-id <id>', 'OAuth client id').env('MCP_CLIENT_ID'))
    .addOption(
      new Option('--client-secret <secret>', 'OAuth client secret').env('MCP_CLIENT_SECRET'),
    )
    .option('--scope <scopes>', 'scopes to ask for (default: those the endpoint lists)')
    .action(async (options: LoginOptions) => {
      const url = endpointUrl(options);
      // An exported but empty MCP_CLIENT_ID / MCP_CLIENT_SECRET means unset.
      if (options.clientId === '') delete options.clientId;
      if (options.clientSecret === '') delete options.clientSecret;
      if (options.clientSecret !== undefined && options.clientId === undefined) {
        throw new CliExit(ExitCode.Usage, '--client-secret needs --client-id (or MCP_CLIENT_ID)');
      }
      const login =
        options.clientSecret === undefined
          ? await browserLogin(url, options)
          : await loginWithClientCredentials(url, {
              clientId: options.clientId ?? '',
              clientSecret: options.clientSecret,
              ...(options.scope === undefined ? {} : { scope: options.scope }),
            });
      const store = new CredentialStore(options.configDir);
      await store.save(login);
      const summary = { url, issuer: login.issuer, clientId: login.clientId, scope: login.scope };
      if (options.json) printJson({ loggedIn: true, ...summary });
      else
        process.stderr.write(
          `logged in to ${url} as client ${login.clientId} at ${login.issuer} (saved in ${store.path})\n`,
        );
    });

  withJson(withConnection(program.command('logout')))
    .description('forget the login stored for an endpoint')
    .action(async (options: ConnectionOptions) => {
      const url = endpointUrl(options);
      const removed = await new CredentialStore(options.configDir).remove(url);
      if (options.json) printJson({ url, loggedOut: removed });
      else process.stderr.write(removed ? `logged out of ${url}\n` : `no login for ${url}\n`);
    });

  return program;
}

/** The browser login: the URL to open goes to stderr; the code comes back to a loopback port. */
async function browserLogin(url: string, options: LoginOptions): Promise<StoredLogin> {
  try {
    return await loginWithBrowser({
      url,
      ...(options.clientId === undefined ? {} : { clientId: options.clientId }),
      ...(options.scope === undefined ? {} : { scope: options.scope }),
      onAuthorizationUrl: (authorizationUrl) => {
        process.stderr.write(`open this URL in a browser to log in:\n  ${authorizationUrl}\n`);
      },
    });
  } catch (error) {
    if (error instanceof OAuthError) throw new CliExit(ExitCode.ServerError, error.message);
    throw error;
  }
}

/** Discovers where to log in, proves the credentials with one token, and answers what to store. */
async function loginWithClientCredentials(
  url: string,
  credentials: { clientId: string; clientSecret: string; scope?: string },
): Promise<StoredLogin> {
  let authorization;
  try {
    authorization = await discoverAuthorization(url);
  } catch (error) {
    if (error instanceof OAuthError) throw new CliExit(ExitCode.ServerError, error.message);
    throw error;
  }
  const scope = credentials.scope ?? authorization.scopesSupported.join(' ');
  let token;
  try {
    token = await requestClientCredentialsToken({ url, ...credentials, scope }, authorization);
  } catch (error) {
    if (error instanceof OAuthError) throw new CliExit(ExitCode.ServerError, error.message);
    throw error;
  }
  return {
    grant: 'client_credentials',
    url,
    issuer: authorization.issuer,
    tokenEndpoint: authorization.tokenEndpoint,
    resource: authorization.resource,
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    ...(scope === '' ? {} : { scope }),
    accessToken: token.accessToken,
    ...(token.expiresAt === undefined ? {} : { expiresAt: token.expiresAt }),
  };
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
