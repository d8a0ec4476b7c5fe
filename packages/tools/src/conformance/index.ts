import type { ToolDefinition } from '@mcp-tasks/tool-sdk';
import { confirmDelete } from './confirm-delete.js';
import { failingJob } from './failing-job.js';
import { greet } from './greet.js';
import { multiInput } from './multi-input.js';
import { protocolErrorJob } from './protocol-error-job.js';
import { slowCompute } from './slow-compute.js';
import { testLoggingTool } from './test-logging-tool.js';
import { testMissingCapability } from './test-missing-capability.js';
import { testStreamingElicitation } from './test-streaming-elicitation.js';
import { testToolWithTask } from './test-tool-with-task.js';
import { testTriggerPromptChange, testTriggerToolChange } from './test-trigger-list-change.js';

/**
 * The `conformance` pack: the fixtures the official suite's scenarios call by name. To add one,
 * write it as its own module here and list it below.
 */
export const CONFORMANCE_TOOLS: readonly ToolDefinition[] = [
  greet,
  slowCompute,
  failingJob,
  protocolErrorJob,
  confirmDelete,
  multiInput,
  testToolWithTask,
  testMissingCapability,
  testStreamingElicitation,
  testLoggingTool,
  testTriggerToolChange,
  testTriggerPromptChange,
];
