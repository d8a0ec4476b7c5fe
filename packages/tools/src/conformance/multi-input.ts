import { z } from 'zod';
import {
  acceptedField,
  defineTool,
  elicitForm,
  readElicitResult,
  textResult,
} from '@mcp-tasks/tool-sdk';
import { NoArgsSchema, type NoArgs } from './no-args.js';

export const MULTI_INPUT_KEYS = ['first', 'second'] as const;

const MultiInputStateSchema = z.object({ asked: z.boolean() });

const nameRequest = (which: string) =>
  elicitForm(`What is the ${which} name?`, {
    type: 'object',
    // Not required: the conformance suite answers every pending key with a generic accept
    // (`{confirm: true}`), and the step reports "(no answer)" for a missing name.
    properties: { name: { type: 'string' } },
  });

/** Conformance fixture: one round with two elicitations outstanding at once (partial answers). */
export const multiInput = defineTool<NoArgs>({
  name: 'multi_input',
  description: 'Asks two questions at once, then reports both answers; runs as a task.',
  inputSchema: { type: 'object', properties: {} },
  arguments: NoArgsSchema,
  mode: 'task',
  task: {
    initialStatusMessage: 'Preparing two questions',
    start: () => ({ asked: false }),
    step(raw, _args, ctx) {
      const parsed = MultiInputStateSchema.safeParse(raw);
      if (!parsed.success)
        throw new Error(`unreadable multi_input checkpoint: ${parsed.error.message}`);
      if (!parsed.data.asked) {
        return Promise.resolve({
          kind: 'input',
          state: { asked: true },
          inputRequests: { first: nameRequest('first'), second: nameRequest('second') },
          statusMessage: 'Waiting for two answers',
        });
      }
      const [first, second] = MULTI_INPUT_KEYS.map(
        (key) =>
          acceptedField(readElicitResult(ctx.inputResponses, key), 'name', 'string') ??
          '(no answer)',
      );
      return Promise.resolve({
        kind: 'complete',
        result: textResult(`Got ${first} and ${second}`),
      });
    },
  },
});
