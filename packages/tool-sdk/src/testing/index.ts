export {
  pgHarnessDatabase,
  startToolTask,
  type HarnessDatabase,
  type HarnessOptions,
  type HarnessStatus,
  type HarnessTransaction,
  type PgPoolLike,
  type ToolRun,
} from './harness.js';
