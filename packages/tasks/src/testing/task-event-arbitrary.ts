import fc from 'fast-check';
import type { JsonObject } from '../json.js';
import type { TaskEvent } from '../lifecycle.js';

/**
 * Test support, exported as `@mcp-tasks/tasks/testing` (source only, never built into dist).
 * Random task lifecycle events for property tests: over a small key space, so that input keys
 * collide (reuse must be refused) and answers hit outstanding, answered and unknown keys.
 */
const elicitation: JsonObject = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'ok?' },
};
const acceptance: JsonObject = { action: 'accept', content: {} };
const inputKey = fc.constantFrom('a', 'b', 'c', 'd', 'e');

export const taskEventArbitrary: fc.Arbitrary<TaskEvent> = fc.oneof(
  fc.record({ type: fc.constant('progress' as const), statusMessage: fc.option(fc.string()) }),
  fc.record({
    type: fc.constant('request_input' as const),
    requests: fc
      .uniqueArray(inputKey, { minLength: 1, maxLength: 3 })
      .map((keys) => Object.fromEntries(keys.map((key) => [key, elicitation]))),
    statusMessage: fc.constant(null),
  }),
  fc.record({
    type: fc.constant('respond' as const),
    responses: fc
      .uniqueArray(inputKey, { maxLength: 5 })
      .map((keys) => Object.fromEntries(keys.map((key) => [key, acceptance]))),
  }),
  fc.record({
    type: fc.constant('complete' as const),
    result: fc.constant<JsonObject>({ content: [{ type: 'text', text: 'done' }] }),
  }),
  fc.record({
    type: fc.constant('fail' as const),
    error: fc.constant({ code: -32603, message: 'boom' }),
    statusMessage: fc.constant('Failed.'),
  }),
  fc.record({ type: fc.constant('cancel' as const), statusMessage: fc.constant('Stopped.') }),
);
