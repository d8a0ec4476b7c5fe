import { z } from 'zod';
import { defineTool, textResult } from '@mcp-tasks/tool-sdk';

// `name` defaults so a generic client calling the first listed tool with `{}` gets an answer.
const GreetArgsSchema = z.object({ name: z.string().default('World') });

/** Conformance fixture: a cheap synchronous tool, never a task. */
export const greet = defineTool<z.infer<typeof GreetArgsSchema>>({
  name: 'greet',
  description: 'Says hello to someone (synchronous).',
  inputSchema: {
    type: 'object',
    properties: { name: { type: 'string', default: 'World' } },
  },
  arguments: GreetArgsSchema,
  mode: 'sync',
  runSync: (args) => Promise.resolve(textResult(`Hello, ${args.name}!`)),
});
