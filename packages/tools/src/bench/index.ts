// Not a pack: a module for MCP_TOOL_MODULES that `pnpm bench` loads into its own gateways and
// workers (the workload users run, issue 30). No deployment lists it.
import { realisticWorkflow } from './realistic-workflow.js';

export const tools = [realisticWorkflow];
/** The path the bench's processes load it from (their working directory is the repository). */
export const REALISTIC_TOOL_MODULE = './packages/tools/dist/bench/index.js';
export {
  APPROVE_KEY,
  LABEL_KEY,
  REALISTIC_TOOL,
  WORK_STEPS,
  realisticWorkflow,
} from './realistic-workflow.js';
