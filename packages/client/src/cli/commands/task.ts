import { Option, type Command } from 'commander';
import type { InputResponses, TaskSnapshot } from '../../types.js';
import { connect, type ConnectionOptions } from '../context.js';
import { CliExit, ExitCode, exitCodeForStatus } from '../exit-codes.js';
import { follow, report } from '../follow.js';
import { withConnection, withJson, type FollowOptions } from '../options.js';
import { describeOutcome, describeSnapshot, printJson } from '../output.js';
import { promptAll } from '../prompts.js';
import { consoleBaseUrl, describeEvent, fetchHistory } from '../history.js';

/** get, watch, answer, cancel, history and resume: one task (or this client's unfinished ones) by id. */
export function addTaskCommands(program: Command, setExit: (code: ExitCode) => void): void {
  addGet(program, setExit);
  addWatch(program, setExit);
  addAnswer(program, setExit);
  addCancel(program);
  addHistory(program);
  addResume(program, setExit);
}

/** get: one snapshot, its exit code from the status. */
function addGet(program: Command, setExit: (code: ExitCode) => void): void {
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
}

/** watch: follow a task live until it ends; never exits for input. */
function addWatch(program: Command, setExit: (code: ExitCode) => void): void {
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
}

/** answer: tasks/update with prompted or --json answers. */
function addAnswer(program: Command, setExit: (code: ExitCode) => void): void {
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
}

/** cancel: tasks/cancel. */
function addCancel(program: Command): void {
  withJson(withConnection(program.command('cancel')))
    .description('tasks/cancel: ask the task to stop')
    .argument('<taskId>')
    .action(async (taskId: string, options: ConnectionOptions) => {
      await (await connect(options)).task(taskId).cancel();
      if (options.json) printJson({ taskId, cancelRequested: true });
      else process.stderr.write(`cancel requested for ${taskId}\n`);
    });
}

/** history: a task's events from the operator console. */
function addHistory(program: Command): void {
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
}

/** resume: follow every unfinished task this client started. */
function addResume(program: Command, setExit: (code: ExitCode) => void): void {
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
}
