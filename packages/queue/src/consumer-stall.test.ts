import { newTaskId } from '@mcp-tasks/tasks';
import { createTestRedis, startTcpProxy, type TcpProxy, type TestRedis } from '@mcp-tasks/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTaskConsumer, type ConsumerStall } from './task-consumer.js';
import { createTaskQueue } from './task-queue.js';

/**
 * Issue 26: under kill-redis-master a worker process stayed up while its BullMQ fetch loop never
 * came back from a fetch begun around the failover. The wake-up waited in the queue (marker and
 * all), the sweeper rightly saw it pending and sent no other, and the task stayed `working`.
 * Here the same wedge comes from a real network fault: the consumer's link to Redis is a black
 * hole for longer than BullMQ's blocking wait, then heals. BullMQ drops its blocking connection
 * and reconnects into the hole; the ready check it sends there is never answered, so its fetch
 * waits forever on a healed link (seen for 60 s and more before the fix).
 */
let redis: TestRedis;
let admin: Redis;
let proxy: TcpProxy;

beforeAll(async () => {
  redis = await createTestRedis('consumer_stall');
  admin = new Redis(redis.url);
  proxy = await startTcpProxy({ target: redis.url });
});

afterAll(async () => {
  await proxy?.close();
  const keys = await admin.keys(`${redis.prefix}*`);
  if (keys.length > 0) await admin.del(...keys);
  admin.disconnect();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** What the queue holds, for a failure's message (a wait that never ends says where the job is). */
async function queueContents(prefix: string): Promise<string> {
  const key = (name: string) => `${prefix}:mcp-tasks-run:${name}`;
  const [wait, active, delayed, prioritized] = await Promise.all([
    admin.lrange(key('wait'), 0, -1),
    admin.lrange(key('active'), 0, -1),
    admin.zrange(key('delayed'), 0, -1),
    admin.zrange(key('prioritized'), 0, -1),
  ]);
  return JSON.stringify({ wait, active, delayed, prioritized });
}

/** A consumer stuck in a fetch may never close; past this the test reports what it found. */
const CLOSE_BOUND_MS = 10_000;

/** BullMQ's blocking wait (drainDelay 5 s) and its watchdog's second, with room to spare. */
const LONGER_THAN_A_BLOCKING_WAIT_MS = 9_000;

/** Black holes tried for a wedge before the test gives up (nearly always the first wedges). */
const WEDGE_ATTEMPTS = 3;

describe('a consumer whose fetch loop stopped taking wake-ups', () => {
  it.each([
    { wakeUp: 'a waiting wake-up', reason: 'created', delayMs: 0 },
    // Only a fetch promotes a due delayed job: a stuck loop leaves it in the delayed set.
    { wakeUp: 'a retry (delayed) wake-up', reason: 'retry', delayMs: 300 },
  ] as const)(
    'is replaced, and $wakeUp is delivered',
    async ({ reason, delayMs }) => {
      // A prefix per case: a wake-up one case left waiting must not be judged in the next.
      const prefix = `${redis.prefix}-${reason}`;
      const delivered = new Set<string>();
      const stalls: ConsumerStall[] = [];
      const consumer = createTaskConsumer({
        redis: { url: proxy.urlFor(redis.url) },
        prefix,
        concurrency: 2,
        stallCheckMs: 2_000,
        handle: (job) => {
          delivered.add(job.taskId);
          return Promise.resolve();
        },
        onStall: (stall) => stalls.push(stall),
      });
      // The producer reaches Redis directly: only the consumer's link fails.
      const queue = createTaskQueue({ redis: { url: redis.url }, prefix });
      try {
        await consumer.waitUntilReady();
        const before = newTaskId();
        await queue.wake(before, 'created');
        expect(await eventually(() => delivered.has(before), 10_000)).toBe(true);

        // The wedge needs BullMQ's reconnect to land inside the hole, which is a matter of timing:
        // when it lands after the heal the loop simply goes on (CI saw a wake-up delivered with
        // no stall). Every wake-up must be delivered; the fault is repeated until one was
        // delivered by a replacement, so the recovery under test did run.
        const afters: string[] = [];
        let stall: ConsumerStall | undefined;
        for (let attempt = 1; attempt <= WEDGE_ATTEMPTS && stall === undefined; attempt++) {
          proxy.blackhole();
          await sleep(LONGER_THAN_A_BLOCKING_WAIT_MS);
          proxy.heal();

          const after = newTaskId();
          afters.push(after);
          await queue.wake(after, reason, { delayMs });
          // Up to a minute: a take whose reply the hole swallowed leaves the job active on the
          // old worker until its lock (30 s) lapses and BullMQ's stalled-job check hands it out
          // again (seen once in CI: the retry's job active, no stall, at 30 s).
          const afterDelivered = await eventually(() => delivered.has(after), 60_000);
          expect(
            afterDelivered,
            `${after}: ${await queueContents(prefix)}; stalls ${JSON.stringify(stalls)}`,
          ).toBe(true);
          // A stall names the wake-up nobody took: the task id itself, or a retry's own job id.
          // On a starved machine the first wake-up can also wait two checks and be judged (a
          // harmless replacement), so the stall looked for is the one naming this wake-up.
          const stuckJob = new RegExp(reason === 'created' ? `^${after}$` : `^${after}\\.retry\\.`);
          stall = stalls.find((each) => stuckJob.test(each.oldestWaitingJobId));
        }
        expect(
          stall,
          `no wedge in ${WEDGE_ATTEMPTS} black holes; stalls ${JSON.stringify(stalls)}`,
        ).toBeDefined();
        expect(stall?.checks).toBe(2);
        // Nothing is left waiting for a consumer.
        expect(await queue.pendingJobs([before, ...afters])).toEqual(new Set());
      } finally {
        await Promise.race([consumer.close(), sleep(CLOSE_BOUND_MS)]);
        await queue.close();
      }
    },
    240_000,
  );

  it('gives back to the wait list a job that a completion took while the consumer closed', async () => {
    const prefix = `${redis.prefix}-late-take`;
    const key = (name: string) => `${prefix}:mcp-tasks-run:${name}`;
    const [first, second] = [newTaskId(), newTaskId()];
    // Both wait before the consumer starts: it takes the first, and the completion of the first
    // (a slot still free) takes the second in the same script.
    const queue = createTaskQueue({ redis: { url: redis.url }, prefix });
    await queue.wake(first, 'created');
    await queue.wake(second, 'created');
    const started: string[] = [];
    const consumer = createTaskConsumer({
      redis: { url: proxy.urlFor(redis.url) },
      prefix,
      concurrency: 2,
      stallCheckMs: 0,
      handle: (job) => {
        started.push(job.taskId);
        // Redis runs the completion (and the take of the second); its reply is held.
        proxy.holdReplies();
        return Promise.resolve();
      },
    });
    try {
      expect(await eventually(() => started.length === 1, 10_000)).toBe(true);
      let taken = false;
      const deadline = Date.now() + 10_000;
      while (!taken && Date.now() < deadline) {
        taken = (await admin.lrange(key('active'), 0, -1)).includes(second);
        if (!taken) await sleep(50);
      }
      expect(taken, `second never taken: ${await queueContents(prefix)}`).toBe(true);
      const closing = consumer.close();
      // The reply comes once close has given up on the take (a late answer, not a dead link).
      await sleep(300);
      proxy.heal();
      await closing;
      expect(started).toEqual([first]);
      expect(await admin.lrange(key('active'), 0, -1)).toEqual([]);
      expect(await admin.lrange(key('wait'), 0, -1)).toEqual([second]);
    } finally {
      proxy.heal();
      await queue.close();
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
    }
  }, 30_000);

  it.each([
    // A slot stays free once the job's wake-up starts: its completion also takes the next job.
    { completion: 'that takes the next job', concurrency: 2 },
    // The one slot is taken when the job is completed: the completion goes in the background.
    { completion: 'in the background', concurrency: 1 },
  ])(
    'closes while a completion $completion hangs on a dead link',
    async ({ concurrency }) => {
      const prefix = `${redis.prefix}-hung-completion-${concurrency}`;
      const started: string[] = [];
      const consumer = createTaskConsumer({
        redis: { url: proxy.urlFor(redis.url) },
        prefix,
        concurrency,
        stallCheckMs: 0,
        handle: (job) => {
          started.push(job.taskId);
          // From here the consumer's link swallows everything: the completion is never answered.
          proxy.blackhole();
          return Promise.resolve();
        },
      });
      const queue = createTaskQueue({ redis: { url: redis.url }, prefix });
      try {
        await consumer.waitUntilReady();
        await queue.wake(newTaskId(), 'created');
        expect(await eventually(() => started.length === 1, 10_000)).toBe(true);
        await sleep(500);
        const closed = await Promise.race([
          consumer.close().then(() => true),
          sleep(CLOSE_BOUND_MS).then(() => false),
        ]);
        expect(closed, 'close waited for a completion stuck on a black-holed link').toBe(true);
      } finally {
        proxy.heal();
        await queue.close();
        const keys = await admin.keys(`${prefix}*`);
        if (keys.length > 0) await admin.del(...keys);
      }
    },
    30_000,
  );

  it('is left alone while it takes wake-ups, however long the backlog', async () => {
    const stalls: ConsumerStall[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const consumer = createTaskConsumer({
      redis: { url: redis.url },
      prefix: `${redis.prefix}-busy`,
      concurrency: 1,
      stallCheckMs: 500,
      // Its one slot is taken for the whole test: a backlog waits, and that is no stall.
      handle: () => held,
      onStall: (stall) => stalls.push(stall),
    });
    const queue = createTaskQueue({ redis: { url: redis.url }, prefix: `${redis.prefix}-busy` });
    try {
      await consumer.waitUntilReady();
      await queue.wakeBatch([newTaskId(), newTaskId(), newTaskId()], 'created');
      await sleep(3_000);
      expect(stalls).toEqual([]);
    } finally {
      release();
      await consumer.close();
      await queue.close();
      const keys = await admin.keys(`${redis.prefix}-busy*`);
      if (keys.length > 0) await admin.del(...keys);
    }
  }, 30_000);
});
