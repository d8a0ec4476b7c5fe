import { defineTool, textResult } from '@mcp-tasks/tool-sdk';
import { NoArgsSchema, type NoArgs } from './no-args.js';

/**
 * Conformance fixtures (server-stateless) that ask the server to change its tool or prompt list.
 * Our lists are fixed per deployment (same bytes on every replica, R8) and `listChanged` is not
 * declared, so these answer that nothing changed and no list_changed notification follows.
 */
function listChangeTrigger(name: string, list: 'tool' | 'prompt') {
  return defineTool<NoArgs>({
    name,
    description: `Asks for a ${list} list change; the ${list} list of this server never changes.`,
    inputSchema: { type: 'object', properties: {} },
    arguments: NoArgsSchema,
    mode: 'sync',
    runSync: () =>
      Promise.resolve(
        textResult(`The ${list} list is fixed for this deployment; nothing changed.`),
      ),
  });
}

export const testTriggerToolChange = listChangeTrigger('test_trigger_tool_change', 'tool');
export const testTriggerPromptChange = listChangeTrigger('test_trigger_prompt_change', 'prompt');
