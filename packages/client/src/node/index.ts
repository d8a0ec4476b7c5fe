export { FileHandleStore, defaultStateDir } from './file-handle-store.js';
