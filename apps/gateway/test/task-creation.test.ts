import { createTaskService, getTask } from '@mcp-tasks/store';
import { describe, expect, it } from 'vitest';
import { buildGateway, useGatewayUnderTest } from './support/harness.js';
import { SERVER_INFO_META, SMALL_REPORT, getTaskResult, rpc } from './support/rpc.js';

// Creating a task: the flat CreateTaskResult, durable before return, and what happens when the
// enqueue or the task service fails (R10, R11).

const { infra, gw } = useGatewayUnderTest('gw_create');

describe('creating a task (R10, R11)', () => {
  it('returns a flat CreateTaskResult that tasks/get resolves immediately, and enqueues a wake-up', async () => {
    const reply = await rpc(gw.app, 'tools/call', SMALL_REPORT);
    const result = reply.result;
    expect(Object.keys(result).sort()).toEqual([
      '_meta',
      'createdAt',
      'lastUpdatedAt',
      'pollIntervalMs',
      'resultType',
      'status',
      'statusMessage',
      'taskId',
      'ttlMs',
    ]);
    expect(result).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 3_600_000,
      pollIntervalMs: 1000,
      _meta: SERVER_INFO_META,
    });
    expect(result.taskId).toMatch(/^tsk_[A-Za-z0-9_-]{24}$/);
    expect(result.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
    const taskId = result.taskId as string;
    const get = await getTaskResult(gw.app, taskId);
    expect(get.result).toEqual({ ...result, resultType: 'complete' });
    // The wake-up goes after the reply, once its linger is over.
    await expect.poll(() => infra.queue.hasPendingJob(taskId)).toBe(true);
    const stored = await getTask(infra.db, taskId);
    expect(stored?.owner).toEqual({ tenant: 'acme', principal: 'alice' });
    expect(stored?.operation).toEqual({
      method: 'tools/call',
      toolName: 'generate_report',
      arguments: { size: 'small' },
    });
  });

  it('still returns a valid handle when the enqueue fails after the commit', async () => {
    const broken = buildGateway(infra, {
      wakeUpQueue: { wake: () => Promise.reject(new Error('redis down')) },
    });
    const reply = await rpc(broken.app, 'tools/call', SMALL_REPORT);
    expect(reply.status).toBe(200);
    const taskId = reply.result.taskId as string;
    const get = await rpc(broken.app, 'tasks/get', { taskId });
    expect(get.result.status).toBe('working');
  });

  it('answers an unexpected failure with -32603 and 500, without its message', async () => {
    const failing = buildGateway(infra, {
      taskService: {
        createAndWake: () => Promise.reject(new Error('connection refused to 10.0.0.7')),
        submitInputResponses: () => Promise.reject(new Error('unused')),
        cancel: () => Promise.reject(new Error('unused')),
        getTaskView: () => Promise.reject(new Error('unused')),
        getTaskViewsFromPrimary: () => Promise.reject(new Error('unused')),
        getInputRequests: () => Promise.reject(new Error('unused')),
        flagListened: () => Promise.reject(new Error('unused')),
        settleWakeUps: () => Promise.resolve(),
        databaseChecks: [],
        console: createTaskService({ db: infra.db, wakeUpQueue: infra.queue }).console,
      },
    });
    const reply = await rpc(failing.app, 'tools/call', SMALL_REPORT, { id: 'boom' });
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual({
      jsonrpc: '2.0',
      id: 'boom',
      error: { code: -32603, message: 'Internal error' },
    });
  });

  it('counts created tasks in /metrics', async () => {
    const metrics = await (await gw.app.request('/metrics')).text();
    expect(metrics).toMatch(/mcp_tasks_created_total\{tool="generate_report"\} [1-9]/);
    expect(metrics).toMatch(
      /mcp_requests_total\{method="tools\/call",code="ok",status="200"\} [1-9]/,
    );
    expect(metrics).toContain('mcp_request_duration_seconds_bucket');
  });
});
