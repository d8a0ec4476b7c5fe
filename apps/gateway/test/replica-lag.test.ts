import {
  ReplicaLagError,
  createTaskService,
  getTask,
  type CreateOptions,
  type TaskService,
} from '@mcp-tasks/store';
import { describe, expect, it } from 'vitest';
import { useGatewayUnderTest } from './support/harness.js';
import { SMALL_REPORT, rpc } from './support/rpc.js';

/**
 * Issue 11, item 4, at the gateway: which creates may be kept after a replica-lag timeout, and
 * what the client is told. The store's behaviour with a real streaming replica is proven in
 * packages/store/src/replica-retry.test.ts; here the first wait is made to time out.
 */
const seen: (CreateOptions | undefined)[] = [];
let lagging = true;

const { infra, gw } = useGatewayUnderTest('gw_replica_lag', (started) => {
  const real = createTaskService({ db: started.db, dispatcher: started.queue });
  const taskService: TaskService = {
    ...real,
    async createAndDispatch(input, options) {
      seen.push(options);
      if (!lagging) return real.createAndDispatch(input, options);
      throw new ReplicaLagError('tsk_lagging', 5000, '0/0');
    },
  };
  return { taskService };
});

describe('a create that times out waiting for the read replica', () => {
  it('is a retryable 503 that says nothing was started, for a fresh id', async () => {
    seen.length = 0;
    lagging = true;
    const reply = await rpc(gw.app, 'tools/call', SMALL_REPORT);
    expect(reply.status).toBe(503);
    expect(reply.headers.get('retry-after')).toBe('1');
    expect(reply.error).toEqual({
      code: -32603,
      message:
        'The read replica is lagging, so the task could not be handed out; nothing will run. Retry the call.',
    });
    expect(seen).toEqual([{ derivedId: false }]);
  });

  it('is a retryable 503 for the final MRTR round, whose retry gets the same task that runs', async () => {
    const call = { name: 'test_tool_with_task', arguments: {} };
    lagging = false;
    const round = await rpc(gw.app, 'tools/call', call);
    const finalRound = {
      ...call,
      requestState: round.result.requestState,
      inputResponses: { user_name: { action: 'accept', content: { name: 'Ann' } } },
    };
    seen.length = 0;
    lagging = true;
    const reply = await rpc(gw.app, 'tools/call', finalRound);
    expect(reply.status).toBe(503);
    expect(reply.headers.get('retry-after')).toBe('1');
    expect(reply.error).toEqual({
      code: -32603,
      message:
        'The read replica is lagging, so the task could not be handed out yet; it is kept, not withdrawn. Retry this exact call (same requestState and answers) to get its handle.',
    });
    expect(seen).toEqual([{ derivedId: true }]);
    lagging = false;
    const retried = await rpc(gw.app, 'tools/call', finalRound);
    expect(retried.status).toBe(200);
    expect(retried.result).toMatchObject({ resultType: 'task', status: 'working' });
    expect((await getTask(infra.db, retried.result.taskId as string))?.status).toBe('working');
  });
});
