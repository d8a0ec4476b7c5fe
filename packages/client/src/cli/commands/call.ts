import type { Command } from 'commander';
import { InputRequiredError } from '../../errors.js';
import { buildToolArguments, collectArg } from '../arguments.js';
import { canPrompt, connect } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { follow, report } from '../follow.js';
import { withConnection, withJson, type FollowOptions } from '../options.js';
import { describeOutcome, printJson } from '../output.js';
import { promptAll } from '../prompts.js';

/** call: run a tool, as a task or not, and follow it unless detached. */
export function addCallCommand(program: Command, setExit: (code: ExitCode) => void): void {
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
}
