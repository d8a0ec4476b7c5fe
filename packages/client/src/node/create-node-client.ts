import { createClient, type ClientOptions, type McpTasksClient } from '../client.js';
import { FileHandleStore } from './file-handle-store.js';

/**
 * `createClient` for Node with the file handle store as the default, so a restarted process can
 * `resumeAll()` what the previous one started (one file per URL + token, under `stateDir`).
 */
export function createNodeClient(options: ClientOptions & { stateDir?: string }): McpTasksClient {
  const { stateDir, ...clientOptions } = options;
  return createClient({
    ...clientOptions,
    store: options.store ?? new FileHandleStore(options.url, options.token, stateDir),
  });
}
