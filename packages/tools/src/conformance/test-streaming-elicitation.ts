import { defineTool, elicitForm, textResult } from '@mcp-tasks/tool-sdk';
import { NoArgsSchema, type NoArgs } from './no-args.js';

const KEY = 'favourite_colour';

/**
 * Conformance fixture (server-stateless): needs input mid-call. The stateless protocol never sends
 * a request to the client on a response stream, so the question goes back as an MRTR
 * `input_required` result and the answer comes with the retried call.
 */
export const testStreamingElicitation = defineTool<NoArgs>({
  name: 'test_streaming_elicitation',
  description: 'Asks the client one question through MRTR (never a server-to-client request).',
  inputSchema: { type: 'object', properties: {} },
  arguments: NoArgsSchema,
  mode: 'sync',
  gatherInput: (args, inputResponses) =>
    inputResponses[KEY] === undefined
      ? {
          kind: 'need_input',
          inputRequests: {
            [KEY]: elicitForm('What is your favourite colour?', {
              type: 'object',
              properties: { colour: { type: 'string' } },
              required: ['colour'],
            }),
          },
        }
      : { kind: 'ready', arguments: args },
  runSync: (_args) => Promise.resolve(textResult('Thanks for answering.')),
});
