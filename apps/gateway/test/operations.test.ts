import { createTaskService, type TaskService } from '@mcp-tasks/store';
import { createToolCatalogue } from '@mcp-tasks/tools';
import { describe, expect, it, vi } from 'vitest';
import { buildGateway, useGatewayUnderTest } from './support/harness.js';
import { CAPS_NONE, SMALL_REPORT, createReportTask, rpc } from './support/rpc.js';

// Operating the gateway: the tasks/get rate limit, MCP_REQUEST_TIMEOUT_MS, readiness and drain.

const { infra, gw } = useGatewayUnderTest('gw_operations');

describe('operations', () => {
  it('rate-limits tasks/get faster than pollIntervalMs when enabled', async () => {
    const limited = buildGateway(infra, {
      config: { pollRateLimit: true, taskPollIntervalMs: 60_000 },
    });
    const taskId = await createReportTask(limited.app);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1)
      statuses.push((await rpc(limited.app, 'tasks/get', { taskId })).status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses[5]).toBe(429);
    const limitedReply = await rpc(limited.app, 'tasks/get', { taskId });
    expect(limitedReply.error.code).toBe(-32600);
    expect(limitedReply.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('rate-limits tasks/get per principal before the read, across task ids', async () => {
    const limited = buildGateway(infra, {
      config: { pollRateLimit: true, taskPollIntervalMs: 60_000 },
    });
    const taskId = await createReportTask(limited.app);
    // Twenty polls of ids that do not exist spend the principal's burst without a task bucket.
    const missing: unknown[] = [];
    for (let i = 0; i < 20; i += 1) {
      const id = `tsk_${String(i).padStart(24, 'x')}`;
      missing.push((await rpc(limited.app, 'tasks/get', { taskId: id })).error.code);
    }
    expect(missing).toEqual(Array.from({ length: 20 }, () => -32602));
    const throttled = await rpc(limited.app, 'tasks/get', { taskId });
    expect(throttled.status).toBe(429);
    expect(throttled.error.code).toBe(-32600);
    expect(throttled.headers.get('retry-after')).toMatch(/^[1-6]$/);
    const other = await rpc(limited.app, 'tasks/get', { taskId }, { as: 'bob' });
    expect(other.status).toBe(400);
  });

  it('answers a request that outlives MCP_REQUEST_TIMEOUT_MS with 504 and -32603', async () => {
    const impatient = buildGateway(infra, { config: { requestTimeoutMs: 100 } });
    const reply = await rpc(
      impatient.app,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 1 } },
      { caps: CAPS_NONE },
    );
    expect(reply.status).toBe(504);
    expect(reply.error.code).toBe(-32603);
  });

  it('returns the task handle when creation outlasts MCP_REQUEST_TIMEOUT_MS (no orphan task)', async () => {
    const real = createTaskService({ db: infra.db, wakeUpQueue: infra.queue });
    const slowService: TaskService = {
      ...real,
      async createAndWake(input, options) {
        // Taken into its INSERT (which disarms the deadline), then a replica wait longer than
        // the request timeout.
        const task = await real.createAndWake(input, options);
        await new Promise((resolve) => setTimeout(resolve, 300));
        return task;
      },
    };
    const impatient = buildGateway(infra, {
      config: { requestTimeoutMs: 100 },
      taskService: slowService,
    });
    const reply = await rpc(impatient.app, 'tools/call', SMALL_REPORT);
    expect(reply.status).toBe(200);
    expect(reply.result.resultType).toBe('task');
    const fetched = await rpc(impatient.app, 'tasks/get', { taskId: reply.result.taskId });
    expect(fetched.status).toBe(200);
    expect(fetched.result.taskId).toBe(reply.result.taskId);
    expect(fetched.result.status).toBe('working');
  });

  it('aborts the synchronous work of a request that timed out', async () => {
    const impatient = buildGateway(infra, { config: { requestTimeoutMs: 100 } });
    // The catalogue hands out the pack's own definition, so the gateway calls this spy.
    const slowCompute = createToolCatalogue({ packs: ['conformance'] }).get('slow_compute')!;
    const original = slowCompute.runSync!;
    let running: Promise<unknown> | undefined;
    const spy = vi.spyOn(slowCompute, 'runSync').mockImplementation((args, call) => {
      running = original(args, call);
      return running as ReturnType<typeof original>;
    });
    try {
      const reply = await rpc(
        impatient.app,
        'tools/call',
        { name: 'slow_compute', arguments: { seconds: 30 } },
        { caps: CAPS_NONE },
      );
      expect(reply.status).toBe(504);
      expect(spy).toHaveBeenCalledTimes(1);
      await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      spy.mockRestore();
    }
  });

  it('refuses a synchronous slow_compute longer than 60 s with -32602', async () => {
    const reply = await rpc(
      gw.app,
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 61 } },
      { caps: CAPS_NONE },
    );
    expect(reply.status).toBe(400);
    expect(reply.error).toEqual({
      code: -32602,
      message:
        'slow_compute runs at most 60 s without a task; declare the tasks extension for longer',
    });
  });

  it('answers a failed readiness check as "fail", without the driver error text', async () => {
    const local = buildGateway(infra, {
      queue: { ping: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.7:6379')) },
    });
    const ready = await local.app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: 'not_ready',
      checks: { postgres: 'ok', redis: 'fail' },
    });
  });

  it('reports liveness, readiness of Postgres and Redis, and drains on shutdown', async () => {
    const local = buildGateway(infra);
    expect((await local.app.request('/healthz')).status).toBe(200);
    const ready = await local.app.request('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { postgres: 'ok', redis: 'ok' },
    });
    local.shutdown.abort();
    expect((await local.app.request('/readyz')).status).toBe(503);
    const refused = await rpc(local.app, 'server/discover', {});
    expect(refused.status).toBe(503);
    expect(refused.error.code).toBe(-32603);
  });
});
