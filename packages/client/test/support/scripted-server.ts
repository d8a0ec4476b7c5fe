import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';

/**
 * A small real MCP Tasks server with one scripted task, for what the product's gateway cannot be
 * made to do: push `notifications/tasks` without ever answering `tasks/get`, have no
 * `subscriptions/listen`, or ask for a form with every field type.
 *
 * The task: `working` → `input_required` (the form below) → after `tasks/update` → `working` → `completed`.
 */
export type ServerMode = 'notifications' | 'polling' | 'both';

export const FORM = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Tell us about the job',
    requestedSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', title: 'Name' },
        count: { type: 'integer', title: 'Count' },
        ratio: { type: 'number', title: 'Ratio' },
        urgent: { type: 'boolean', title: 'Urgent' },
        color: { type: 'string', title: 'Color', enum: ['red', 'green', 'blue'] },
        note: { type: 'string', title: 'Note' },
      },
      required: ['name', 'count', 'ratio', 'urgent', 'color'],
    },
  },
};

export interface ScriptedServer {
  url: string;
  /** Every JSON-RPC request received, in order. */
  requests: {
    method: string;
    params: Record<string, unknown>;
    headers: IncomingMessage['headers'];
  }[];
  /** The `inputResponses` of each `tasks/update`. */
  updates: Record<string, unknown>[];
  /** Moves the task to its next step (tests drive the clock). */
  advance(): void;
  status(): string;
  /** Cuts every open listen stream, as a replica that died would. */
  dropStreams(): void;
  close(): Promise<void>;
}

const TASK_ID = 'tsk_scripted_0001';

export async function startScriptedServer(mode: ServerMode): Promise<ScriptedServer> {
  const steps = ['working', 'input_required', 'working', 'completed'] as const;
  let step = 0;
  const requests: ScriptedServer['requests'] = [];
  const updates: Record<string, unknown>[] = [];
  const streams = new Set<ServerResponse>();
  let subscriptionId: unknown;

  const snapshot = (): Record<string, unknown> => {
    const status = steps[step]!;
    const base: Record<string, unknown> = {
      taskId: TASK_ID,
      status,
      statusMessage: `step ${step}`,
      createdAt: '2026-08-01T00:00:00Z',
      lastUpdatedAt: '2026-08-01T00:00:00Z',
      ttlMs: null,
      pollIntervalMs: 100,
    };
    if (status === 'input_required') base.inputRequests = { job: FORM };
    if (status === 'completed') {
      base.result = { resultType: 'complete', content: [{ type: 'text', text: 'scripted done' }] };
    }
    return base;
  };
  const push = () => {
    for (const stream of streams) {
      stream.write(
        `event: message\ndata: ${JSON.stringify({
          jsonrpc: '2.0',
          method: 'notifications/tasks',
          params: {
            ...snapshot(),
            _meta: { 'io.modelcontextprotocol/subscriptionId': subscriptionId },
          },
        })}\n\n`,
      );
    }
  };
  const reply = (res: ServerResponse, id: unknown, body: Record<string, unknown>, status = 200) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id, ...body }));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const message = JSON.parse(Buffer.concat(chunks).toString()) as {
      id: unknown;
      method: string;
      params: Record<string, unknown>;
    };
    requests.push({ method: message.method, params: message.params, headers: req.headers });
    switch (message.method) {
      case 'tools/call':
        return reply(res, message.id, {
          result: { resultType: 'task', ...snapshot(), status: 'working' },
        });
      case 'tasks/get':
        if (mode === 'notifications') {
          return reply(res, message.id, {
            error: { code: -32601, message: 'Method not found: tasks/get' },
          });
        }
        return reply(res, message.id, { result: { resultType: 'complete', ...snapshot() } });
      case 'tasks/update':
        updates.push(message.params.inputResponses as Record<string, unknown>);
        if (steps[step] === 'input_required') step += 1;
        reply(res, message.id, { result: { resultType: 'complete' } });
        push();
        return;
      case 'subscriptions/listen': {
        if (mode === 'polling') {
          return reply(res, message.id, {
            error: { code: -32601, message: 'Method not found: subscriptions/listen' },
          });
        }
        subscriptionId = message.id;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        streams.add(res);
        res.on('close', () => streams.delete(res));
        // Only task notifications: no acknowledgement, no graceful end, whatever the mode.
        push();
        return;
      }
      default:
        return reply(res, message.id, {
          error: { code: -32601, message: `Method not found: ${message.method}` },
        });
    }
  };
  const server: Server = createServer((req, res) => void handle(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    requests,
    updates,
    advance() {
      if (steps[step] !== 'input_required' && step < steps.length - 1) step += 1;
      push();
    },
    status: () => steps[step]!,
    dropStreams() {
      for (const stream of streams) stream.destroy();
    },
    async close() {
      for (const stream of streams) stream.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
