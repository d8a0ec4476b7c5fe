import { Option, type Command } from 'commander';
import type { ConnectionOptions } from './context.js';

/** The options every command that talks to an endpoint takes. */
export function withConnection(command: Command): Command {
  return command
    .addOption(new Option('--url <url>', 'MCP endpoint').env('MCP_URL'))
    .addOption(new Option('--token <token>', 'bearer token').env('MCP_TOKEN'))
    .addOption(new Option('--state-dir <dir>', 'where unfinished task handles are kept'))
    .addOption(
      new Option('--config-dir <dir>', 'where logins are kept').env('MCP_TASKS_CONFIG_DIR'),
    );
}

/** `--json`: machine-readable output, which also turns prompts and the spinner off. */
export function withJson(command: Command): Command {
  return command.option('--json', 'print JSON for scripts (no prompts, no spinner)');
}

export interface FollowOptions extends ConnectionOptions {
  poll?: boolean;
  /** Stop with exit 4 when input is needed and cannot be prompted for (call, resume). */
  exitOnInput?: boolean;
}

export interface LoginOptions extends ConnectionOptions {
  clientId?: string;
  clientSecret?: string;
  scope?: string;
}
