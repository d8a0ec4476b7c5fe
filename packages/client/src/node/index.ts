export { FileHandleStore, defaultStateDir } from './file-handle-store.js';
export { createNodeClient } from './create-node-client.js';
export {
  CredentialStore,
  defaultConfigDir,
  storedLoginTokenSource,
  type StoredLogin,
} from './credential-store.js';
