export { FileHandleStore, defaultStateDir } from './file-handle-store.js';
export { createNodeClient } from './create-node-client.js';
