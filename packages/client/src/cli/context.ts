import { createClient, type McpTasksClient } from '../client.js';
import { FileHandleStore } from '../node/file-handle-store.js';
import { CliExit, ExitCode } from './exit-codes.js';

export interface ConnectionOptions {
  url?: string;
  token?: string;
  stateDir?: string;
  json?: boolean;
  /** commander's `--no-input`: never prompt, exit 4 when input is needed. */
  input?: boolean;
}

export const CLIENT_INFO = { name: 'mcp-tasks-cli', version: '0.1.0' };

/** `--url`/`--token` win over `MCP_URL`/`MCP_TOKEN`; the store is one file per url + token. */
export function connect(options: ConnectionOptions, env = process.env): McpTasksClient {
  const url = options.url ?? env.MCP_URL;
  if (url === undefined || url === '') {
    throw new CliExit(ExitCode.Usage, 'no endpoint: pass --url https://host/mcp or set MCP_URL');
  }
  try {
    new URL(url);
  } catch {
    throw new CliExit(ExitCode.Usage, `--url ${JSON.stringify(url)} is not a URL`);
  }
  const token = options.token ?? (env.MCP_TOKEN === '' ? undefined : env.MCP_TOKEN);
  return createClient({
    url,
    ...(token === undefined ? {} : { token }),
    clientInfo: CLIENT_INFO,
    store: new FileHandleStore(url, token, options.stateDir),
  });
}

/** Prompts only on a terminal, and never with `--no-input` or `--json`. */
export function canPrompt(options: ConnectionOptions): boolean {
  return options.input !== false && !options.json && process.stdin.isTTY === true;
}
