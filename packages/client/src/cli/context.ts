import type { McpTasksClient } from '../client.js';
import { createNodeClient } from '../node/create-node-client.js';
import { CredentialStore, storedLoginTokenSource } from '../node/credential-store.js';
import { CliExit, ExitCode } from './exit-codes.js';
import { traceContextFromEnv } from './trace-env.js';

export interface ConnectionOptions {
  url?: string;
  token?: string;
  stateDir?: string;
  /** Where `login` keeps credentials (default ~/.config/mcp-tasks). */
  configDir?: string;
  json?: boolean;
  /** commander's `--no-input`: never prompt, exit 4 when input is needed. */
  input?: boolean;
}

export const CLIENT_INFO = { name: 'mcp-tasks-cli', version: '0.1.0' };

/** The endpoint of `--url` / `MCP_URL`, checked to be a URL. */
export function endpointUrl(options: ConnectionOptions, env = process.env): string {
  const url = options.url ?? env.MCP_URL;
  if (url === undefined || url === '') {
    throw new CliExit(ExitCode.Usage, 'no endpoint: pass --url https://host/mcp or set MCP_URL');
  }
  try {
    new URL(url);
  } catch {
    throw new CliExit(ExitCode.Usage, `--url ${JSON.stringify(url)} is not a URL`);
  }
  return url;
}

/**
 * `--url`/`--token` win over `MCP_URL`/`MCP_TOKEN`; without a token, the login `mcp-tasks login`
 * stored for the URL (refreshed as needed). The handle store is one file per url + identity.
 */
export async function connect(
  options: ConnectionOptions,
  env = process.env,
): Promise<McpTasksClient> {
  const url = endpointUrl(options, env);
  const traceContext = traceContextFromEnv(env);
  const common = {
    url,
    clientInfo: CLIENT_INFO,
    ...(traceContext === undefined ? {} : { traceContext }),
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
  };
  // An empty MCP_TOKEN (exported but unset in a script) means none, as does an empty --token.
  const token = [options.token, env.MCP_TOKEN].find((value) => value !== undefined && value !== '');
  if (token !== undefined) return createNodeClient({ ...common, token });
  const store = new CredentialStore(options.configDir);
  const login = await store.get(url);
  if (login === undefined) return createNodeClient(common);
  return createNodeClient({
    ...common,
    getToken: storedLoginTokenSource(store, login),
    identity: `client:${login.clientId}@${login.issuer}`,
  });
}

/** Prompts only on a terminal, and never with `--no-input` or `--json`. */
export function canPrompt(options: ConnectionOptions): boolean {
  return options.input !== false && !options.json && process.stdin.isTTY === true;
}
