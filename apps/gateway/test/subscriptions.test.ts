import {
  claimLease,
  completeTask,
  createDb,
  createTaskService,
  requestInput,
  saveCheckpoint,
} from '@mcp-tasks/store';
import { describe, expect, it } from 'vitest';
import { SERVER_INFO } from '../src/app.js';
import { DEFAULT_LISTEN_LIMITS } from '../src/mcp/listen-limits.js';
import { buildGateway, useGatewayUnderTest, type GatewayUnderTest } from './support/harness.js';
import {
  createReportTask,
  rpcBody,
  rpcHeaders,
  sseReader,
  type RpcOptions,
} from './support/rpc.js';

const { infra, gw } = useGatewayUnderTest('gw_listen');
const SUB = 'io.modelcontextprotocol/subscriptionId';

async function listen(app: GatewayUnderTest['app'], taskIds: string[], options: RpcOptions = {}) {
  const params = { notifications: { taskIds } };
  const response = await app.request('/mcp', {
    method: 'POST',
    headers: rpcHeaders('subscriptions/listen', params, options),
    body: JSON.stringify(rpcBody('subscriptions/listen', params, { id: 'sub-1', ...options })),
  });
  return { response, events: sseReader(response) };
}

describe('subscriptions/listen (R21)', () => {
  it('streams the ack, the current snapshot, a snapshot per committed change, then the graceful end', async () => {
    const taskId = await createReportTask(gw.app);
    const { response, events } = await listen(gw.app, [taskId]);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('cache-control')).toMatch(/no-cache/);
    expect(response.headers.get('x-accel-buffering')).toBe('no');

    const ack = await events.next();
    expect(ack?.data).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: [taskId] }, _meta: { [SUB]: 'sub-1' } },
    });
    const current = await events.next();
    expect(current?.data).toMatchObject({
      jsonrpc: '2.0',
      method: 'notifications/tasks',
      params: { taskId, status: 'working', _meta: { [SUB]: 'sub-1' } },
    });
    expect((current?.data as { params: Record<string, unknown> }).params).not.toHaveProperty(
      'resultType',
    );

    // Drive transitions through the store, as a worker on any process would.
    const claim = await claimLease(infra.db, taskId, 'test-worker', 30_000);
    if (claim === null) throw new Error('not claimable');
    await saveCheckpoint(infra.db, claim.fence, { step: 1 }, 'Halfway');
    const progress = await events.next();
    expect(progress?.data).toMatchObject({
      params: { taskId, status: 'working', statusMessage: 'Halfway' },
    });

    await completeTask(infra.db, claim.fence, { content: [{ type: 'text', text: 'done' }] });
    const done = await events.next();
    expect(done?.data).toMatchObject({
      method: 'notifications/tasks',
      params: {
        taskId,
        status: 'completed',
        result: { resultType: 'complete', content: [{ type: 'text', text: 'done' }] },
        _meta: { [SUB]: 'sub-1' },
      },
    });
    const end = await events.next();
    expect(end?.data).toEqual({
      jsonrpc: '2.0',
      id: 'sub-1',
      result: {
        resultType: 'complete',
        _meta: { [SUB]: 'sub-1', 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
      },
    });
    await expect(events.next()).resolves.toBeUndefined();
  });

  it('acknowledges only the caller own tasks: foreign and unknown ids are left out', async () => {
    const mine = await createReportTask(gw.app);
    const foreign = await createReportTask(gw.app, { as: 'eve' });
    const { events } = await listen(gw.app, [
      mine,
      foreign,
      'tsk_doesnotexistdoesnotexist',
      'garbage',
    ]);
    const ack = await events.next();
    expect((ack?.data as { params: { notifications: unknown } }).params.notifications).toEqual({
      taskIds: [mine],
    });
    const snapshot = await events.next();
    expect(snapshot?.data).toMatchObject({ params: { taskId: mine } });
    await events.cancel();
  });

  it('delivers input_required with its requests to the subscriber', async () => {
    const taskId = await createReportTask(gw.app);
    const { events } = await listen(gw.app, [taskId]);
    await events.next();
    await events.next();
    const claim = await claimLease(infra.db, taskId, 'test-worker', 30_000);
    if (claim === null) throw new Error('not claimable');
    const request = {
      method: 'elicitation/create',
      params: { mode: 'form', message: 'ok?', requestedSchema: { type: 'object', properties: {} } },
    };
    await requestInput(infra.db, claim.fence, { approve: request }, { step: 1 }, 'Waiting');
    const parked = await events.next();
    expect(parked?.data).toMatchObject({
      params: { taskId, status: 'input_required', inputRequests: { approve: request } },
    });
    await events.cancel();
  });

  it('sends every current snapshot again after the change listener reconnects', async () => {
    const taskId = await createReportTask(gw.app);
    const { events } = await listen(gw.app, [taskId]);
    await events.next();
    const first = await events.next();
    infra.resync();
    const again = await events.next();
    expect(again?.data).toEqual(first?.data);
    await events.cancel();
  });

  it('ends open streams with the graceful end message when the gateway shuts down', async () => {
    const local = buildGateway(infra);
    const taskId = await createReportTask(gw.app);
    const { events } = await listen(local.app, [taskId]);
    await events.next();
    await events.next();
    local.shutdown.abort();
    const end = await events.next();
    expect(end?.data).toMatchObject({
      id: 'sub-1',
      result: { resultType: 'complete', _meta: { [SUB]: 'sub-1' } },
    });
    await expect(events.next()).resolves.toBeUndefined();
  });

  it('ends at once, after the ack, when no requested task is the caller own', async () => {
    const foreign = await createReportTask(gw.app, { as: 'eve' });
    const { events } = await listen(gw.app, [foreign]);
    const ack = await events.next();
    expect((ack?.data as { params: { notifications: unknown } }).params.notifications).toEqual({
      taskIds: [],
    });
    const end = await events.next();
    expect(end?.data).toMatchObject({ id: 'sub-1', result: { resultType: 'complete' } });
  });

  it('is not cut by MCP_REQUEST_TIMEOUT_MS: a listen whose initial loads outlast it still streams', async () => {
    const impatient = buildGateway(infra, { config: { requestTimeoutMs: 1 } });
    const taskIds = await Promise.all(Array.from({ length: 20 }, () => createReportTask(gw.app)));
    const { response, events } = await listen(impatient.app, taskIds);
    expect(response.status).toBe(200);
    const ack = await events.next();
    expect((ack?.data as { params: { notifications: unknown } }).params.notifications).toEqual({
      taskIds,
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const snapshot = await events.next();
    expect(snapshot?.data).toMatchObject({ method: 'notifications/tasks' });
    await events.cancel();
  });

  it('opens a dozen streams on one gateway without a MaxListenersExceededWarning', async () => {
    const local = buildGateway(infra);
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on('warning', onWarning);
    try {
      const taskId = await createReportTask(gw.app);
      const streams = [];
      for (let i = 0; i < 12; i += 1) {
        const { events } = await listen(local.app, [taskId], { id: `sub-${i}` });
        await events.next();
        streams.push(events);
      }
      // Warnings are emitted on a later tick.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await Promise.all(streams.map((events) => events.cancel()));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('builds no stream for a client that left before the initial loads finished', async () => {
    const local = buildGateway(infra);
    const taskId = await createReportTask(gw.app);
    const params = { notifications: { taskIds: [taskId] } };
    const gone = new AbortController();
    gone.abort();
    const response = await local.app.request(
      new Request('http://gateway.test/mcp', {
        method: 'POST',
        headers: rpcHeaders('subscriptions/listen', params),
        body: JSON.stringify(rpcBody('subscriptions/listen', params, { id: 'gone' })),
        signal: gone.signal,
      }),
    );
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await local.metrics.openStreams.get()).values).toEqual([{ value: 0, labels: {} }]);
  });
  it('keeps its tasks announced while it stays open past MCP_LISTEN_FLAG_TTL_MS, and lets them lapse after', async () => {
    const shortFlags = buildGateway(infra, {
      config: { listenLimits: { ...DEFAULT_LISTEN_LIMITS, flagTtlMs: 300 } },
    });
    const taskId = await createReportTask(shortFlags.app);
    const { events } = await listen(shortFlags.app, [taskId]);
    await events.next(); // ack
    await events.next(); // current snapshot
    // Three flag lifetimes: without renewal the change below would never be announced.
    await new Promise((resolve) => setTimeout(resolve, 900));
    const claim = await claimLease(infra.db, taskId, 'test-worker', 30_000);
    if (claim === null) throw new Error('not claimable');
    await saveCheckpoint(infra.db, claim.fence, { step: 1 }, 'Still listened');
    expect((await events.next())?.data).toMatchObject({
      params: { taskId, statusMessage: 'Still listened' },
    });
    await events.cancel();
    // Once the stream is gone nobody renews the flag: it lapses within its lifetime.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const row = await infra.db
      .selectFrom('tasks')
      .select('listened_until')
      .where('id', '=', taskId)
      .executeTakeFirstOrThrow();
    expect(row.listened_until!.getTime()).toBeLessThan(Date.now());
  });

  it('reads the first snapshot of a task the flag did not write: flagged by another stream, or terminal', async () => {
    const taskId = await createReportTask(gw.app);
    const first = await listen(gw.app, [taskId], { id: 'first' });
    await first.events.next(); // ack
    await first.events.next(); // current snapshot, as the flag left it
    // Flagged already: the second stream's flag writes nothing, its read finds the task.
    const second = await listen(gw.app, [taskId], { id: 'second' });
    await second.events.next(); // ack
    expect((await second.events.next())?.data).toMatchObject({
      params: { taskId, status: 'working', _meta: { [SUB]: 'second' } },
    });
    const claim = await claimLease(infra.db, taskId, 'test-worker', 30_000);
    if (claim === null) throw new Error('not claimable');
    await completeTask(infra.db, claim.fence, { content: [{ type: 'text', text: 'done' }] });
    for (const { events } of [first, second]) {
      expect((await events.next())?.data).toMatchObject({
        params: { taskId, status: 'completed' },
      });
      expect((await events.next())?.data).toMatchObject({ result: { resultType: 'complete' } });
    }
    // Terminal: never flagged; the read sends its snapshot, then the stream ends.
    const late = await listen(gw.app, [taskId], { id: 'late' });
    await late.events.next(); // ack
    expect((await late.events.next())?.data).toMatchObject({
      params: { taskId, status: 'completed', _meta: { [SUB]: 'late' } },
    });
    expect((await late.events.next())?.data).toMatchObject({
      id: 'late',
      result: { resultType: 'complete' },
    });
  });

  it('loads the new snapshots of several streams whose tasks changed together in ONE statement', async () => {
    // The gateway's store on a pool that records every statement it sends.
    const statements: string[] = [];
    const countedDb = createDb({
      connectionString: infra.database.connectionString,
      max: 4,
      log: (event) => {
        if (event.level === 'query') statements.push(event.query.sql);
      },
    });
    try {
      const local = buildGateway(infra, {
        taskService: createTaskService({ db: countedDb, wakeUpQueue: infra.queue }),
      });
      const callers = ['alice', 'bob', 'eve'] as const;
      const streams = [];
      for (const as of callers) {
        const taskId = await createReportTask(gw.app, { as });
        const { events } = await listen(local.app, [taskId], { as, id: `sub-${as}` });
        await events.next(); // ack
        await events.next(); // current snapshot
        streams.push({ as, taskId, events });
      }
      statements.length = 0;
      // One commit: its notifications reach the gateway together.
      await infra.db
        .updateTable('tasks')
        .set({ status_message: 'Together' })
        .where(
          'id',
          'in',
          streams.map(({ taskId }) => taskId),
        )
        .execute();
      for (const { as, taskId, events } of streams) {
        expect((await events.next())?.data).toMatchObject({
          params: { taskId, statusMessage: 'Together', _meta: { [SUB]: `sub-${as}` } },
        });
      }
      expect(statements).toHaveLength(1);
      await Promise.all(streams.map(({ events }) => events.cancel()));
    } finally {
      await countedDb.destroy();
    }
  });
});
