import { createClient, type ClientOptions, type McpTasksClient } from '../client.js';
import { FileHandleStore } from './file-handle-store.js';

export interface NodeClientOptions extends ClientOptions {
  stateDir?: string;
  /**
   * Who the handles belong to, for the handle store's file: by default the static token. With a
   * token source (`getToken`) tokens change, so name the stable identity behind them (a client
   * id at its issuer), or handles saved under one token would be lost at the next refresh.
   */
  identity?: string;
}

/**
 * `createClient` for Node with the file handle store as the default, so a restarted process can
 * `resumeAll()` what the previous one started (one file per URL + identity, under `stateDir`).
 */
export function createNodeClient(options: NodeClientOptions): McpTasksClient {
  const { stateDir, identity, ...clientOptions } = options;
  return createClient({
    ...clientOptions,
    store: options.store ?? new FileHandleStore(options.url, identity ?? options.token, stateDir),
  });
}
