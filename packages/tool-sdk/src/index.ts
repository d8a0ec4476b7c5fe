// The stable surface for tool authors. Everything a tool needs is exported from here; the
// in-process test harness is `@mcp-tasks/tool-sdk/testing`.
export * from './tool.js';
export { defineTool } from './define-tool.js';
export { acceptedField, elicitForm, readElicitResult, type ElicitResult } from './elicitation.js';
export { sleep } from './sleep.js';
export { textResult } from './text.js';
export {
  DEFAULT_TOOL_VERSION,
  resolveCheckpoint,
  toolVersion,
  type CheckpointResolution,
} from './checkpoint-version.js';
export { assertToolDefinition, toolDefinitionProblems } from './validate-tool.js';
export { ErrorCode, ProtocolError, missingCapabilityError } from '@mcp-tasks/protocol';
export type { InputRequests, InputResponses, JsonObject, JsonValue } from '@mcp-tasks/tasks';
