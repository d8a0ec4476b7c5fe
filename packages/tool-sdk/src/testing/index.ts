export { startToolTask, type HarnessOptions, type HarnessStatus, type ToolRun } from './harness.js';
