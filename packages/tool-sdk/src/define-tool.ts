import type { JsonObject } from '@mcp-tasks/tasks';
import type { ToolDefinition } from './tool.js';

/**
 * Erases a tool's argument type so tools of different shapes sit in one list. Sound because every
 * caller (gateway, worker) runs `definition.arguments` on the raw arguments before handing them to
 * any of the tool's functions, so a function typed for `Args` only ever receives `Args`.
 */
export function defineTool<Args extends JsonObject>(
  definition: ToolDefinition<Args>,
): ToolDefinition {
  return definition as unknown as ToolDefinition;
}
