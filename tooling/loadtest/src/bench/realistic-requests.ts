import { APPROVE_KEY, LABEL_KEY, REALISTIC_TOOL } from '@mcp-tasks/tools/bench';
import { mcpRequest } from './mcp-requests.js';

/** The realistic workflow's requests, as the bench's line and the probes send them. */

/** The first `tools/call`: answered with the MRTR label request and its `requestState`. */
export const labelRound = () => mcpRequest('tools/call', { name: REALISTIC_TOOL, arguments: {} });

/** The MRTR retry with its answer: the call that creates the task. */
export const creatingCall = (requestState: string, turn: number) =>
  mcpRequest('tools/call', {
    name: REALISTIC_TOOL,
    arguments: {},
    inputResponses: { [LABEL_KEY]: { action: 'accept', content: { label: `run-${turn}` } } },
    requestState,
  });

/** The answer to the task's input pause (`tasks/update`). */
export const approval = (taskId: string) =>
  mcpRequest('tasks/update', {
    taskId,
    inputResponses: { [APPROVE_KEY]: { action: 'accept', content: { approved: true } } },
  });
