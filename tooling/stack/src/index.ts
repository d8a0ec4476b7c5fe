export {
  DEFAULT_DATABASE_URL,
  DEFAULT_REDIS_PREFIX,
  DEFAULT_REDIS_URL,
  startStack,
  type StackHandle,
  type StackOptions,
} from './stack.js';
export {
  DEMO_CONSOLE_TOKENS,
  DEMO_MCP_TOKENS,
  DEMO_REQUEST_STATE_SECRET,
  DEMO_TOKENS,
} from './demo-credentials.js';
export { buildStalePackages } from './incremental-build.js';
export { StackStartError, ensurePostgres, ensureRedis } from './preflight.js';
export { renderNginxConfig, readNginxTemplate } from './nginx-config.js';
export { stackState, type StackState } from './state-file.js';
