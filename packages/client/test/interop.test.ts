import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';
import { buildRoutingHeaders } from '@mcp-tasks/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/index.js';
import { startRecorder, type Recorded } from './support/recorder.js';
import { startStack, TOKENS, type Stack } from './support/stack.js';

/**
 * The same calls made by the official client (`@modelcontextprotocol/client` 2.x with
 * `@modelcontextprotocol/ext-tasks` 0.2.2) and by ours, each through a recording HTTP hop in front
 * of a real gateway and worker; the recorded requests must match.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack('client_interop', { gateways: 1, workers: 1 });
}, 180_000);
afterAll(async () => {
  await stack?.close();
});

const CLIENT_INFO = { name: 'interop', version: '1.0.0' };
/** What the official client declares with `capabilities: {elicitation: {form: {}}}` plus ext-tasks. */
const CAPABILITIES = {
  elicitation: { form: {} },
  extensions: { 'io.modelcontextprotocol/tasks': {} },
};
const APPROVE = { action: 'accept' as const, content: { approved: true } };
/** The headers a server routes and authorizes by; transport noise (user-agent, …) is left out. */
const WIRE_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
];

function normalize(recorded: Recorded, taskIds: string[]) {
  const text = taskIds.reduce(
    (json, id, i) => json.split(id).join(`<task ${i}>`),
    JSON.stringify(recorded.body),
  );
  const { id: _id, ...body } = JSON.parse(text) as Record<string, unknown>;
  const headers = Object.fromEntries(
    WIRE_HEADERS.filter((h) => recorded.headers[h] !== undefined).map((h) => [
      h,
      taskIds.reduce((v, id, i) => v.split(id).join(`<task ${i}>`), String(recorded.headers[h])),
    ]),
  );
  return { headers, body };
}

function first(recorded: Recorded[], method: string): Recorded {
  const found = recorded.find((r) => r.body.method === method);
  if (found === undefined) throw new Error(`no ${method} was sent`);
  return found;
}

async function officialRun() {
  const recorder = await startRecorder(stack.gateways[0]!.url);
  const sdk = new Client(CLIENT_INFO, {
    versionNegotiation: { mode: { pin: '2026-07-28' } },
    capabilities: { elicitation: { form: {} } },
  });
  await sdk.connect(
    new StreamableHTTPClientTransport(new URL(recorder.url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKENS.alice}` } },
    }),
  );
  await sdk.listTools();
  let nextId = 1;
  const session = createTaskSessionFromClient(sdk, {
    endpointId: 'interop',
    // ext-tasks frames V2 task requests itself but leaves their HTTP hop to the host; this hop
    // adds only what HTTP needs (the routing headers that mirror the body it was given).
    rawDispatch: async (request) => {
      // The JSON-RPC envelope is the host's too: ext-tasks hands over method and params.
      const message: Record<string, unknown> = {
        jsonrpc: '2.0',
        id: `ext-${nextId++}`,
        ...(request as Record<string, unknown>),
      };
      const params = (message.params ?? {}) as Record<string, unknown>;
      const response = await fetch(recorder.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${TOKENS.alice}`,
          ...buildRoutingHeaders(String(message.method), params, '2026-07-28'),
        },
        body: JSON.stringify(message),
      });
      const reply = (await response.json()) as { result?: unknown; error?: never };
      return reply.error !== undefined
        ? { kind: 'error', error: reply.error }
        : { kind: 'result', result: reply.result as never };
    },
    v2RequestFraming: {
      protocolVersion: '2026-07-28',
      clientInfo: CLIENT_INFO,
      clientCapabilities: { elicitation: { form: {} } },
    },
    onInputRequest: () => Promise.resolve(APPROVE as never),
  });
  const report = await session.callTool('generate_report', { size: 'small' });
  const settled = await report.settle();
  const slow = await session.callTool('slow_compute', { seconds: 30 });
  await slow.cancel();
  const taskIds = [report.handle?.taskId, slow.handle?.taskId].map(String);
  await session.close();
  await sdk.close();
  await recorder.close();
  return { recorded: recorder.recorded, taskIds, status: settled.outcome.status };
}

async function ourRun() {
  const recorder = await startRecorder(stack.gateways[0]!.url);
  const client = createClient({
    url: recorder.url,
    token: TOKENS.alice,
    clientInfo: CLIENT_INFO,
    capabilities: CAPABILITIES,
  });
  await client.discover();
  await client.listTools();
  const report = await client.callTool('generate_report', { size: 'small' });
  if (report.kind !== 'task') throw new Error('expected a task');
  const final = await report.handle.wait({ onInput: () => ({ approve_outline: APPROVE }) });
  const slow = await client.callTool('slow_compute', { seconds: 30 });
  if (slow.kind !== 'task') throw new Error('expected a task');
  await slow.handle.cancel();
  return {
    recorded: recorder.recorded,
    taskIds: [report.handle.taskId, slow.handle.taskId],
    status: final.status,
  };
}

describe('the same calls as the official ext-tasks 0.2.2 client', () => {
  it('sends the same wire messages for discover, tools/list, tools/call, tasks/get, tasks/update and tasks/cancel', async () => {
    const official = await officialRun();
    const ours = await ourRun();
    expect(official.status).toBe('completed');
    expect(ours.status).toBe('completed');
    for (const method of [
      'server/discover',
      'tools/list',
      'tools/call',
      'tasks/get',
      'tasks/update',
      'tasks/cancel',
    ]) {
      const theirs = normalize(first(official.recorded, method), official.taskIds);
      const mine = normalize(first(ours.recorded, method), ours.taskIds);
      expect({ method, ...mine }).toEqual({ method, ...theirs });
    }
  }, 120_000);
});
