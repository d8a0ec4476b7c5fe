import { defineTool, textResult } from '@mcp-tasks/tool-sdk';
import { NoArgsSchema, type NoArgs } from './no-args.js';

/**
 * Conformance fixture (server-stateless): a tool that would log. Without a per-request
 * `logLevel` no `notifications/message` may be sent, and this server never sends one, so the
 * tool answers plainly.
 */
export const testLoggingTool = defineTool<NoArgs>({
  name: 'test_logging_tool',
  description: 'Answers without sending log notifications (none were requested).',
  inputSchema: { type: 'object', properties: {} },
  arguments: NoArgsSchema,
  mode: 'sync',
  runSync: () => Promise.resolve(textResult('Done, without log notifications.')),
});
