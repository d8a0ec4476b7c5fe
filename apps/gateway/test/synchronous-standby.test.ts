import { createTaskQueue, type TaskQueue } from '@mcp-tasks/queue';
import {
  claimLease,
  createDb,
  createTaskChangeListener,
  createTaskService,
  migrateToLatest,
  recordInputResponses,
  requestInput,
  type Db,
  type TaskChangeListener,
} from '@mcp-tasks/store';
import {
  createTestRedis,
  privatePostgresUnavailableReason,
  startFailoverCluster,
  type FailoverCluster,
  type TestRedis,
} from '@mcp-tasks/testing';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskChangeFeedFrom } from '../src/task-feed.js';
import { buildGateway, type GatewayUnderTest } from './support/harness.js';
import {
  EMPTY_RESULT_REPLY,
  createReportTask,
  elicitation,
  getTaskResult,
  rpc,
} from './support/rpc.js';

/**
 * tasks/update against a primary with a synchronous standby (remote_apply) that the gateway also
 * reads tasks/get from. A primary that crashed and restarted in place has committed, on recovery,
 * what was waiting for the standby: an answer whose tasks/update failed (its connection died with
 * the primary) is on the primary and not yet on the standby. The client sends the same answer
 * again; that acknowledgement must wait until the standby has the answer, or a tasks/get right
 * after shows the answered keys pending again (and a failover then would lose an acknowledged
 * answer). Here the standby's replay is paused, and the recovered commit is made with
 * `synchronous_commit = local`, which leaves the primary in the same state.
 */
const unavailable = privatePostgresUnavailableReason();
if (unavailable !== null) console.warn(`synchronous standby tests skipped: ${unavailable}`);

const OWNER = { tenant: 'acme', principal: 'alice' };

describe.skipIf(unavailable !== null)('tasks/update with a synchronous standby', () => {
  let cluster: FailoverCluster;
  let primary: Db;
  let standby: Db;
  let redis: TestRedis;
  let queue: TaskQueue;
  let listener: TaskChangeListener;
  let gw: GatewayUnderTest;

  beforeAll(async () => {
    cluster = await startFailoverCluster({ databases: ['gw_sync_standby'] });
    await cluster.addStandby();
    primary = createDb({ connectionString: cluster.writeUrl('gw_sync_standby'), max: 4 });
    standby = createDb({ connectionString: cluster.readUrl('gw_sync_standby'), max: 2 });
    await migrateToLatest(primary);
    redis = await createTestRedis('gw_sync_standby');
    queue = createTaskQueue({ redis: { url: redis.url }, prefix: redis.prefix });
    listener = await createTaskChangeListener({
      connectionString: cluster.writeUrl('gw_sync_standby'),
    });
    const taskService = createTaskService({ db: primary, readDb: standby, wakeUpQueue: queue });
    gw = buildGateway(
      { db: primary, queue, changes: taskChangeFeedFrom(listener).feed },
      { taskService },
    );
  }, 180_000);

  afterAll(async () => {
    await listener?.close();
    await queue?.close();
    await redis?.deleteKeys();
    await primary?.destroy();
    await standby?.destroy();
    await cluster?.stop();
  });

  const replay = (fn: 'pg_wal_replay_pause' | 'pg_wal_replay_resume') =>
    standby.selectNoFrom((eb) => eb.fn(fn, []).as('done')).execute();

  it('acknowledges an answer the primary already has only once the standby has it too', async () => {
    const taskId = await createReportTask(gw.app);
    const claim = await claimLease(primary, taskId, 'test-worker', 30_000);
    if (claim === null) throw new Error('not claimable');
    await requestInput(
      primary,
      claim.fence,
      { first: elicitation('one?'), second: elicitation('two?') },
      { step: 1 },
      'Need answers',
    );
    const answers = {
      first: { action: 'accept', content: { ok: true } },
      second: { action: 'accept', content: { ok: false } },
    };
    expect((await getTaskResult(gw.app, taskId)).result.status).toBe('input_required');

    await replay('pg_wal_replay_pause');
    let replied = false;
    let update: ReturnType<typeof rpc> | undefined;
    try {
      // The answer committed on the primary alone, as crash recovery leaves a commit that was
      // waiting for the standby when the primary died (its client was told nothing).
      const alone = createDb({
        connectionString: `${cluster.writeUrl('gw_sync_standby')}?options=${encodeURIComponent('-c synchronous_commit=local')}`,
        max: 1,
      });
      try {
        await recordInputResponses(alone, OWNER, taskId, answers);
      } finally {
        await alone.destroy();
      }
      // The client sends the answer again: the primary shows no outstanding key.
      update = rpc(gw.app, 'tasks/update', { taskId, inputResponses: answers });
      void update.then(() => {
        replied = true;
      });
      await sleep(1_500);
      // Not acknowledged while the standby lacks the answer.
      expect(replied).toBe(false);
    } finally {
      await replay('pg_wal_replay_resume');
    }
    const reply = await update;
    expect(reply.body).toEqual(EMPTY_RESULT_REPLY);
    // Read on the standby right after the acknowledgement: the answers are there.
    const seen = await getTaskResult(gw.app, taskId);
    expect(seen.result.status).toBe('working');
    expect(seen.result.inputRequests).toBeUndefined();
  }, 60_000);
});
