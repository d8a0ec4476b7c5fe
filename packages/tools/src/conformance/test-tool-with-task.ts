import {
  acceptedField,
  defineTool,
  elicitForm,
  ErrorCode,
  ProtocolError,
  readElicitResult,
  textResult,
} from '@mcp-tasks/tool-sdk';
import { z } from 'zod';

export const USER_NAME_KEY = 'user_name';

/**
 * The name is not a client argument: it arrives through the MRTR round, and gatherInput hands it
 * on in the arguments the task is created with (so the task's stored operation carries it).
 */
const TestToolWithTaskArgsSchema = z.object({ name: z.string().optional() });
type TestToolWithTaskArgs = z.infer<typeof TestToolWithTaskArgsSchema>;

/** Conformance fixture: MRTR round 1 asks `user_name`, round 2 becomes a task greeting that name. */
export const testToolWithTask = defineTool<TestToolWithTaskArgs>({
  name: 'test_tool_with_task',
  description: 'Asks your name (a synchronous input round), then greets you from a task.',
  inputSchema: { type: 'object', properties: {} },
  arguments: TestToolWithTaskArgsSchema,
  mode: 'task',
  gatherInput(args, inputResponses) {
    const answer = readElicitResult(inputResponses, USER_NAME_KEY);
    if (answer === undefined) {
      return {
        kind: 'need_input',
        inputRequests: {
          [USER_NAME_KEY]: elicitForm('What is your name?', {
            type: 'object',
            properties: { name: { type: 'string' } },
            required: ['name'],
          }),
        },
      };
    }
    const name = acceptedField(answer, 'name', 'string');
    if (name === undefined) {
      throw new ProtocolError(
        ErrorCode.InvalidParams,
        `${USER_NAME_KEY}: expected an accepted {name: string}`,
      );
    }
    return { kind: 'ready', arguments: { ...args, name } };
  },
  task: {
    initialStatusMessage: 'Preparing a greeting',
    start: () => ({}),
    step: (_state, args) =>
      Promise.resolve({
        kind: 'complete',
        result: textResult(`Hello, ${args.name ?? 'stranger'}! Your task is done.`),
      }),
  },
});
