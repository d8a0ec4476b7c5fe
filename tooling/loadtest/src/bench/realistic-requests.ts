import { createClient } from '@mcp-tasks/client';
import { APPROVE_KEY, LABEL_KEY, REALISTIC_TOOL } from '@mcp-tasks/tools/bench';
import type { Pool } from 'undici';
import { BENCH_TOKEN, mcpRequest, sendMcp } from './mcp-requests.js';

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

/**
 * Follows a task with a `subscriptions/listen` stream on `gatewayUrl`, answers its pause when a
 * pushed snapshot shows it, and returns at the stream's end (the terminal snapshot).
 */
export async function followAndAnswer(gatewayUrl: string, pool: Pool, taskId: string) {
  const listener = createClient({ url: `${gatewayUrl}/mcp`, token: BENCH_TOKEN });
  let answered = false;
  for await (const snapshot of listener
    .task(taskId)
    .subscribe({ signal: AbortSignal.timeout(60_000) })) {
    if (snapshot.status === 'input_required' && !answered) {
      answered = true;
      await sendMcp(gatewayUrl, approval(taskId), pool);
    }
  }
}
