import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type InputRequest, type TaskSnapshot } from '../src/index.js';
import { startScriptedServer, type ScriptedServer } from './support/scripted-server.js';

const ANSWER = {
  job: {
    action: 'accept' as const,
    content: { name: 'Ada', count: 3, ratio: 0.5, urgent: true, color: 'green' },
  },
};

let server: ScriptedServer | undefined;
let ticker: NodeJS.Timeout | undefined;

afterEach(async () => {
  clearInterval(ticker);
  await server?.close();
  server = undefined;
});

async function followToTheEnd(
  mode: 'notifications' | 'polling' | 'both',
  duringWait?: (s: ScriptedServer, snapshot: TaskSnapshot) => void,
) {
  server = await startScriptedServer(mode);
  const running = server;
  const client = createClient({
    url: running.url,
    backoff: { initialMs: 20, maxMs: 200, defaultPollMs: 50 },
  });
  const call = await client.callTool('job', {});
  if (call.kind !== 'task') throw new Error('expected a task');
  const asked: string[][] = [];
  const seen: string[] = [];
  ticker = setInterval(() => running.advance(), 150);
  const final = await call.handle.wait({
    via: 'subscribe',
    onInput: (requests: Record<string, InputRequest>) => {
      asked.push(Object.keys(requests));
      return ANSWER;
    },
    onUpdate: (snapshot) => {
      seen.push(snapshot.status);
      duringWait?.(running, snapshot);
    },
  });
  const count = (method: string) => running.requests.filter((r) => r.method === method).length;
  return { final, asked, seen, count, server: running };
}

describe('following a task on servers that push, poll, or both', () => {
  it('completes on a server that only pushes notifications/tasks (no tasks/get, no ack, no end)', async () => {
    const { final, asked, seen, count, server } = await followToTheEnd('notifications');
    expect(final).toMatchObject({
      status: 'completed',
      result: { content: [{ text: 'scripted done' }] },
    });
    expect(seen).toEqual(['working', 'input_required', 'working', 'completed']);
    expect(asked).toEqual([['job']]);
    expect(server.updates).toEqual([ANSWER]);
    expect(count('tasks/get')).toBe(0);
    expect(count('subscriptions/listen')).toBe(1);
  });

  it('falls back to polling tasks/get on a server without subscriptions/listen (-32601)', async () => {
    const { final, asked, seen, count, server } = await followToTheEnd('polling');
    expect(final.status).toBe('completed');
    // A poller sees states, not transitions: the short `working` after the answer can fall
    // between two polls on a busy machine (the server's clock ticks every 150 ms). The order,
    // and no state reported twice in a row, are what polling promises.
    expect([
      ['working', 'input_required', 'working', 'completed'],
      ['working', 'input_required', 'completed'],
    ]).toContainEqual(seen);
    expect(asked).toEqual([['job']]);
    expect(server.updates).toEqual([ANSWER]);
    expect(count('subscriptions/listen')).toBe(1);
    expect(count('tasks/get')).toBeGreaterThanOrEqual(3);
  });

  it('reconnects and refetches when the stream drops on a server that does both', async () => {
    let dropped = false;
    const { final, asked, count, server } = await followToTheEnd('both', (s, snapshot) => {
      if (!dropped && snapshot.status === 'input_required') {
        dropped = true;
        s.dropStreams();
      }
    });
    expect(final.status).toBe('completed');
    expect(asked).toEqual([['job']]);
    expect(server.updates).toEqual([ANSWER]);
    expect(count('subscriptions/listen')).toBeGreaterThanOrEqual(2);
    expect(count('tasks/get')).toBeGreaterThanOrEqual(1);
  });

  it('sends the exact ElicitResult shape with every required header and _meta key', async () => {
    const { server } = await followToTheEnd('both');
    const update = server.requests.find((r) => r.method === 'tasks/update')!;
    expect(update.params).toEqual({
      taskId: 'tsk_scripted_0001',
      inputResponses: ANSWER,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {
          elicitation: { form: {} },
          extensions: { 'io.modelcontextprotocol/tasks': {} },
        },
      },
    });
    expect(update.headers).toMatchObject({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tasks/update',
      'mcp-name': 'tsk_scripted_0001',
    });
  });
});
