import { type CallContext, ErrorCode, ProtocolError } from '@mcp-tasks/tool-sdk';
import { describe, expect, it } from 'vitest';
import { greet } from './greet.js';
import { testLoggingTool } from './test-logging-tool.js';
import { testMissingCapability } from './test-missing-capability.js';
import { testStreamingElicitation } from './test-streaming-elicitation.js';
import { testTriggerToolChange } from './test-trigger-list-change.js';

const bare: CallContext = { tasksDeclared: false, clientCapabilities: {} };

describe('server-stateless fixtures', () => {
  it('greets the world when called with no arguments', async () => {
    const result = await greet.runSync!(greet.arguments.parse({}), bare);
    expect(result).toEqual({ content: [{ type: 'text', text: 'Hello, World!' }] });
  });

  it('refuses test_missing_capability without sampling, naming {sampling: {}}', () => {
    let thrown: unknown;
    try {
      testMissingCapability.gatherInput!({}, {}, bare);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProtocolError);
    expect((thrown as ProtocolError).toJsonRpcError()).toMatchObject({
      code: ErrorCode.MissingRequiredClientCapability,
      data: { requiredCapabilities: { sampling: {} } },
    });
  });

  it('asks a sampling client one MRTR round, then answers', () => {
    const call: CallContext = { tasksDeclared: false, clientCapabilities: { sampling: {} } };
    const first = testMissingCapability.gatherInput!({}, {}, call);
    expect(first.kind).toBe('need_input');
    if (first.kind !== 'need_input') return;
    expect(Object.values(first.inputRequests)[0]?.method).toBe('sampling/createMessage');
    const key = Object.keys(first.inputRequests)[0]!;
    const answer = { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' };
    expect(testMissingCapability.gatherInput!({}, { [key]: answer }, call)).toEqual({
      kind: 'ready',
      arguments: {},
    });
  });

  it('asks for elicitation through MRTR instead of a server-to-client request', () => {
    const first = testStreamingElicitation.gatherInput!({}, {}, bare);
    expect(first.kind).toBe('need_input');
    if (first.kind !== 'need_input') return;
    const [key, request] = Object.entries(first.inputRequests)[0]!;
    expect(request.method).toBe('elicitation/create');
    const answered = testStreamingElicitation.gatherInput!(
      {},
      { [key]: { action: 'accept', content: { colour: 'blue' } } },
      bare,
    );
    expect(answered).toEqual({ kind: 'ready', arguments: {} });
  });

  it('answers the logging and list-change fixtures synchronously with text', async () => {
    for (const tool of [testLoggingTool, testTriggerToolChange]) {
      expect(tool.mode).toBe('sync');
      const result = await tool.runSync!({}, bare);
      expect(result.content[0]).toMatchObject({ type: 'text' });
    }
  });
});
