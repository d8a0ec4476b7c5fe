import { createClient, type McpTasksClient } from '@mcp-tasks/client';
import { launchGateway, type GatewayHandle } from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, isTerminal, sleep, type Harness } from '../harness.js';

/**
 * The whole product over HTTP: two gateway processes and two worker processes on one Postgres
 * and one Redis prefix. Every request goes to a different replica than the one before. The same
 * cases run on each database topology (Postgres itself, a transaction pooler in front of it), so
 * a topology passes exactly what the plain one does.
 */
const CAPS = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };

export interface EndToEndTopology {
  /** Names the describe block and the test database. */
  name: string;
  /**
   * Puts the topology in front of the harness's database; answers the environment every gateway
   * and worker gets (over the harness's own DATABASE_URL) and how to take it down.
   */
  start(database: { url: string; name: string }): Promise<{
    env: Record<string, string>;
    stop(): Promise<void>;
  }>;
}

/** Postgres itself, as every other test file uses it. */
export const DIRECT_TOPOLOGY: EndToEndTopology = {
  name: 'direct',
  start: () => Promise.resolve({ env: {}, stop: () => Promise.resolve() }),
};

export function describeEndToEnd(topology: EndToEndTopology): void {
  let h: Harness;
  const gateways: GatewayHandle[] = [];
  /** One `@mcp-tasks/client` per gateway, as two users behind no load balancer would have. */
  const clients: McpTasksClient[] = [];
  let stopTopology: () => Promise<void> = () => Promise.resolve();

  beforeAll(async () => {
    h = await createHarness(`worker_e2e_${topology.name}`);
    const started = await topology.start({
      url: h.database.connectionString,
      name: h.database.name,
    });
    stopTopology = () => started.stop();
    const env = {
      DATABASE_URL: h.database.connectionString,
      REDIS_URL: h.redis.url,
      REDIS_PREFIX: h.redis.prefix,
      MCP_AUTH: 'none',
      LOG_LEVEL: 'warn',
      ...started.env,
    };
    for (let i = 0; i < 2; i += 1) {
      const gateway = await launchGateway({ env, readyTimeoutMs: 30_000 });
      gateways.push(gateway);
      clients.push(
        createClient({
          url: `${gateway.url}/mcp`,
          capabilities: CAPS,
          clientInfo: { name: 'worker-e2e', version: '1.0.0' },
        }),
      );
    }
    await h.startWorker(started.env);
    await h.startWorker(started.env);
  }, 90_000);

  afterAll(async () => {
    await Promise.allSettled(gateways.map((g) => g.process.stop()));
    await h?.close();
    await stopTopology();
  });

  let turn = 0;

  /** One JSON-RPC request to the next gateway in turn; answers the result (or throws the error). */
  async function call(
    method: string,
    params: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const client = clients[turn++ % clients.length]!;
    const reply = await client.send(method, params);
    if (reply.message?.error !== undefined) {
      throw new Error(`${method} failed (${reply.status}): ${JSON.stringify(reply.message.error)}`);
    }
    expect(reply.status).toBe(200);
    return reply.message!.result!;
  }

  async function pollUntil(
    taskId: string,
    done: (task: Record<string, unknown>) => boolean,
    timeoutMs = 20_000,
  ): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const task = await call('tasks/get', { taskId });
      if (done(task)) return task;
      if (Date.now() > deadline) throw new Error(`task ${taskId} stuck: ${JSON.stringify(task)}`);
      await sleep(100);
    }
  }

  const terminal = (t: Record<string, unknown>) =>
    ['completed', 'failed', 'cancelled'].includes(t.status as string);

  /** Creates a report task over HTTP and waits until it asks for input. */
  async function createParkedReport(size: 'small' | 'large') {
    const created = await call('tools/call', { name: 'generate_report', arguments: { size } });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = created.taskId as string;
    const parked = await pollUntil(taskId, (t) => t.status === 'input_required' || terminal(t));
    expect(parked.status).toBe('input_required');
    return { taskId, parked };
  }

  describe(`generate_report end to end over HTTP (2 gateways, 2 workers; ${topology.name})`, () => {
    it('creates, asks, accepts a partial answer, resumes and completes a large report', async () => {
      const { taskId, parked } = await createParkedReport('large');
      expect(Object.keys(parked.inputRequests as object).sort()).toEqual([
        'approve_outline',
        'choose_format',
      ]);

      const ack = await call('tasks/update', {
        taskId,
        inputResponses: { approve_outline: { action: 'accept', content: { approved: true } } },
      });
      expect(ack).not.toHaveProperty('status');
      expect(ack.resultType).toBe('complete');
      const partial = await call('tasks/get', { taskId });
      expect(partial.status).toBe('input_required');
      expect(Object.keys(partial.inputRequests as object)).toEqual(['choose_format']);

      await call('tasks/update', {
        taskId,
        inputResponses: { choose_format: { action: 'accept', content: { format: 'html' } } },
      });
      const done = await pollUntil(taskId, terminal);
      expect(done).toMatchObject({
        resultType: 'complete',
        taskId,
        status: 'completed',
        result: {
          resultType: 'complete',
          content: [{ type: 'text' }],
          structuredContent: { size: 'large', format: 'html', approved: true, sections: 6 },
        },
      });
      expect(done).not.toHaveProperty('error');
      expect(done).not.toHaveProperty('inputRequests');
    });

    it('creates, asks, accepts and completes a small report (markdown by default)', async () => {
      const { taskId, parked } = await createParkedReport('small');
      expect(Object.keys(parked.inputRequests as object)).toEqual(['approve_outline']);

      const ack = await call('tasks/update', {
        taskId,
        inputResponses: { approve_outline: { action: 'accept', content: { approved: true } } },
      });
      expect(ack.resultType).toBe('complete');
      const done = await pollUntil(taskId, terminal);
      expect(done).toMatchObject({
        resultType: 'complete',
        taskId,
        status: 'completed',
        result: {
          resultType: 'complete',
          content: [{ type: 'text', text: expect.stringContaining('# Report (small)') as string }],
          structuredContent: { size: 'small', format: 'markdown', approved: true, sections: 2 },
        },
      });
      expect(done).not.toHaveProperty('error');
      expect(done).not.toHaveProperty('inputRequests');
    });

    it('cancels a running slow_compute over HTTP and reports cancelled', async () => {
      const created = await call('tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 60 },
      });
      expect(created.resultType).toBe('task');
      const taskId = created.taskId as string;
      await sleep(500);
      const ack = await call('tasks/cancel', { taskId });
      expect(ack.resultType).toBe('complete');
      const done = await pollUntil(taskId, terminal, 10_000);
      expect(done.status).toBe('cancelled');
      expect(done).not.toHaveProperty('result');
    });

    it('runs test_tool_with_task: an MRTR round, then a task greeting the gathered name', async () => {
      const round1 = await call('tools/call', { name: 'test_tool_with_task', arguments: {} });
      expect(round1.resultType).toBe('input_required');
      expect(round1).not.toHaveProperty('taskId');
      expect(Object.keys(round1.inputRequests as object)).toEqual(['user_name']);
      const round2 = await call('tools/call', {
        name: 'test_tool_with_task',
        arguments: {},
        inputResponses: { user_name: { action: 'accept', content: { name: 'Alice' } } },
        requestState: round1.requestState,
      });
      expect(round2.resultType).toBe('task');
      expect(round2).not.toHaveProperty('requestState');
      const done = await pollUntil(round2.taskId as string, terminal);
      expect(done.status).toBe('completed');
      const [block] = (done.result as { content: { text: string }[] }).content;
      expect(block?.text).toContain('Alice');
    });
    it('streams a task to its end on subscriptions/listen, from the other gateway', async () => {
      const created = await call('tools/call', { name: 'slow_compute', arguments: { seconds: 1 } });
      const taskId = created.taskId as string;
      // The other gateway than the one that created it: the change comes through Postgres.
      const stream = await clients[turn++ % clients.length]!.listen(
        [taskId],
        AbortSignal.timeout(30_000),
      );
      /** What a listen stream carries: notifications, then the reply that ends it. */
      const seen: { method?: string; params?: Record<string, unknown>; result?: unknown }[] = [];
      for await (const message of stream) {
        seen.push(message);
        if (message.method === undefined) break;
      }
      const statuses = seen
        .filter((message) => message.method === 'notifications/tasks')
        .map((message) => message.params?.status);
      expect(statuses.at(-1)).toBe('completed');
      expect(seen[0]?.method).toBe('notifications/subscriptions/acknowledged');
      expect(seen.at(-1)).toMatchObject({ result: { resultType: 'complete' } });
    });

    it('runs a task nobody woke once the sweeper finds it', async () => {
      const task = await h.insertTask('slow_compute', { seconds: 0 });
      const done = await h.waitFor(task.id, isTerminal, 30_000);
      expect(done.status).toBe('completed');
    });
  });
}
