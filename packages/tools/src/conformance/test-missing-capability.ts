import { missingCapabilityError } from '@mcp-tasks/tool-sdk';
import { defineTool, textResult } from '@mcp-tasks/tool-sdk';
import { NoArgsSchema, type NoArgs } from './no-args.js';

const SAMPLING_KEY = 'sample_greeting';

/**
 * Conformance fixture (server-stateless): needs the client's `sampling` capability. A request that
 * did not declare it gets -32021 naming `{sampling: {}}`; one that did is asked, by MRTR, for one
 * `sampling/createMessage` round and answers with the sampled text.
 */
export const testMissingCapability = defineTool<NoArgs>({
  name: 'test_missing_capability',
  description: 'Needs the client sampling capability; without it answers -32021.',
  inputSchema: { type: 'object', properties: {} },
  arguments: NoArgsSchema,
  mode: 'sync',
  gatherInput: (args, inputResponses, call) => {
    if (
      typeof call.clientCapabilities.sampling !== 'object' ||
      call.clientCapabilities.sampling === null
    ) {
      throw missingCapabilityError({ sampling: {} });
    }
    if (inputResponses[SAMPLING_KEY] !== undefined) return { kind: 'ready', arguments: args };
    return {
      kind: 'need_input',
      inputRequests: {
        [SAMPLING_KEY]: {
          method: 'sampling/createMessage',
          params: {
            messages: [{ role: 'user', content: { type: 'text', text: 'Say hello.' } }],
            maxTokens: 50,
          },
        },
      },
    };
  },
  runSync: () => Promise.resolve(textResult('Sampling answered.')),
});
