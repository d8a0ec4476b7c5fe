import type { ToolResult } from './tool.js';

/** A result with one text block, the shape most of our tools answer with. */
export function textResult(text: string, extra: Omit<ToolResult, 'content'> = {}): ToolResult {
  return { content: [{ type: 'text', text }], ...extra };
}
