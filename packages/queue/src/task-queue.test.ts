import { newTaskId } from '@mcp-tasks/tasks';
import { createTestRedis, type TestRedis } from '@mcp-tasks/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WakeUpJobSchema, jobIdFor, type WakeUpJob } from './wake-up-job.js';
import { createTaskConsumer, type TaskConsumer } from './task-consumer.js';
import { createTaskQueue, latestJobKey, type TaskQueue } from './task-queue.js';

let redis: TestRedis;
let admin: Redis;

beforeAll(async () => {
  redis = await createTestRedis('queue');
  admin = new Redis(redis.url);
});

afterAll(async () => {
  const keys = await admin.keys(`${redis.prefix}*`);
  if (keys.length > 0) await admin.del(...keys);
  admin.disconnect();
});

async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('jobIdFor', () => {
  it('uses the bare task id for created and distinct colon-free ids for later wake-ups', () => {
    const taskId = newTaskId();
    expect(jobIdFor(taskId, 'created')).toBe(taskId);
    const a = jobIdFor(taskId, 'resumed');
    const b = jobIdFor(taskId, 'resumed');
    expect(a).not.toBe(b);
    expect(a.startsWith(`${taskId}.resumed.`)).toBe(true);
    for (const id of [a, b, jobIdFor(taskId, 'swept')]) expect(id).not.toContain(':');
  });
});

describe('RunTaskJobSchema', () => {
  it('accepts a task id with a known reason and refuses anything else', () => {
    expect(WakeUpJobSchema.safeParse({ taskId: newTaskId(), reason: 'swept' }).success).toBe(true);
    expect(WakeUpJobSchema.safeParse({ taskId: 'nope', reason: 'swept' }).success).toBe(false);
    expect(WakeUpJobSchema.safeParse({ taskId: newTaskId(), reason: 'because' }).success).toBe(
      false,
    );
  });
});

describe('a job lookup on a queue still connecting', () => {
  it('waits for the connection instead of failing ("Stream isn\'t writeable")', async () => {
    const fresh = createTaskQueue({ redis: { url: redis.url }, prefix: redis.prefix });
    try {
      // Asked in the same turn as the queue was made: the connection is not up yet.
      await expect(fresh.hasPendingJob(newTaskId())).resolves.toBe(false);
      const fresher = createTaskQueue({ redis: { url: redis.url }, prefix: redis.prefix });
      try {
        await expect(fresher.pendingJobs([newTaskId(), newTaskId()])).resolves.toEqual(new Set());
      } finally {
        await fresher.close();
      }
    } finally {
      await fresh.close();
    }
  });
});

describe('a queue or consumer closed while it is still starting', () => {
  it('lets the start-up end quietly: no unhandled rejection (BullMQ patch)', async () => {
    // BullMQ's close drops the listeners its start-up reports through; a version check still in
    // flight then failed on the ended connection and emit('error') threw, escaping as an
    // unhandled rejection (CI, replica-lag.test.ts). Closing at instants spread over the connect
    // hit it in about half the tries for a queue, a tenth for a consumer, before the patch.
    const escaped: unknown[] = [];
    const record = (reason: unknown) => escaped.push(reason);
    process.on('unhandledRejection', record);
    try {
      for (let attempt = 0; attempt < 40; attempt += 1) {
        const queue = createTaskQueue({ redis: { url: redis.url }, prefix: redis.prefix });
        const consumer = createTaskConsumer({
          redis: { url: redis.url },
          prefix: `${redis.prefix}-starting`,
          concurrency: 1,
          handle: () => Promise.resolve(),
        });
        await new Promise((resolve) => setTimeout(resolve, (attempt % 20) / 10));
        await Promise.all([queue.close(), consumer.close()]);
      }
      // A rejection is reported after the microtasks of the turn it happened in.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(escaped).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});

describe('task queue and consumer on real Redis', () => {
  let queue: TaskQueue;
  let consumer: TaskConsumer | undefined;
  const received: WakeUpJob[] = [];
  const invalid: string[] = [];
  let gate: Promise<void> = Promise.resolve();

  beforeAll(() => {
    queue = createTaskQueue({ redis: { url: redis.url }, prefix: redis.prefix });
  });
  afterAll(async () => {
    await consumer?.close();
    await queue.close();
  });

  it('deduplicates a repeated created wake-up while it waits, and reports it live', async () => {
    const taskId = newTaskId();
    await queue.wake(taskId, 'created');
    await queue.wake(taskId, 'created');
    expect(await queue.hasPendingJob(taskId)).toBe(true);
    expect(await queue.hasPendingJob(newTaskId())).toBe(false);
    const waiting = await admin.llen(`${redis.prefix}:mcp-tasks-run:wait`);
    expect(waiting).toBe(1);
  });

  it('delivers every wake-up, drops an invalid payload, and keeps no finished job in Redis', async () => {
    let release!: () => void;
    gate = new Promise<void>((resolve) => (release = resolve));
    consumer = createTaskConsumer({
      redis: { url: redis.url },
      prefix: redis.prefix,
      concurrency: 2,
      handle: async (job) => {
        received.push(job);
        await gate;
      },
      onInvalidPayload: (jobId) => invalid.push(String(jobId)),
    });
    await consumer.waitUntilReady();
    // The created job from the previous test is delivered and held active by the gate.
    await eventually(() => received.length === 1);
    const taskId = received[0]!.taskId;
    // A resume enqueued while the created job is still active is NOT swallowed by it.
    await queue.wake(taskId, 'resumed');
    await eventually(() => received.length === 2);
    expect(received.map((j) => j.reason)).toEqual(['created', 'resumed']);
    // Both wake-ups are active now: nothing is pending delivery.
    expect(await queue.hasPendingJob(taskId)).toBe(false);
    release();
    // Both finish, and their jobs leave Redis.
    await eventually(
      async () => (await admin.keys(`${redis.prefix}:mcp-tasks-run:${taskId}*`)).length === 0,
    );

    // A payload that fails validation is dropped, never handed to the handler.
    // (A raw BullMQ producer, as a buggy or older release might write.)
    const url = new URL(redis.url);
    const raw = new Queue('mcp-tasks-run', {
      connection: { host: url.hostname, port: Number(url.port || 6379) },
      prefix: redis.prefix,
    });
    await raw.add('run-task', { taskId: 'garbage', reason: 'created' }, { removeOnComplete: true });
    await eventually(() => invalid.length === 1);
    await raw.close();
    expect(received).toHaveLength(2);
    await eventually(
      async () => (await admin.keys(`${redis.prefix}:mcp-tasks-run:tsk_*`)).length === 0,
    );
    expect(await admin.zcard(`${redis.prefix}:mcp-tasks-run:completed`)).toBe(0);
    expect(await admin.zcard(`${redis.prefix}:mcp-tasks-run:failed`)).toBe(0);
  });

  it('holds a delayed wake-up until its delay passes', async () => {
    const taskId = newTaskId();
    const before = received.length;
    await queue.wake(taskId, 'retry', { delayMs: 400 });
    expect(await queue.hasPendingJob(taskId)).toBe(true);
    await new Promise((r) => setTimeout(r, 150));
    expect(received.length).toBe(before);
    await eventually(() => received.some((j) => j.taskId === taskId && j.reason === 'retry'));
  });

  it('pings Redis', async () => {
    await expect(queue.ping()).resolves.toBeUndefined();
  });
});

describe('enqueueCreated', () => {
  it('adds a batch of new tasks once each; a repeat adds nothing while the job exists, and a new job once it was removed', async () => {
    const prefix = `${redis.prefix}-created`;
    const queue = createTaskQueue({ redis: { url: redis.url }, prefix });
    const waitKey = `${prefix}:mcp-tasks-run:wait`;
    let consumer: TaskConsumer | undefined;
    try {
      const ids = [newTaskId(), newTaskId(), newTaskId()];
      await queue.wakeCreated(ids);
      await queue.wakeCreated([ids[0]!, ids[0]!]);
      expect((await admin.lrange(waitKey, 0, -1)).sort()).toEqual([...ids].sort());
      // No pointer for a created wake-up: its job id is the task id.
      expect(await admin.exists(latestJobKey(prefix, ids[0]!))).toBe(0);

      // BullMQ deduplicates by the job's hash: once a finished job is removed (removeOnComplete),
      // the same id is a new job. So a repeat must not be sent for a task a worker already took.
      const handled: string[] = [];
      consumer = createTaskConsumer({
        redis: { url: redis.url },
        prefix,
        concurrency: 3,
        handle: (job) => {
          handled.push(job.taskId);
          return Promise.resolve();
        },
      });
      await eventually(() => handled.length === 3);
      await eventually(
        async () => (await admin.exists(`${prefix}:mcp-tasks-run:${ids[0]!}`)) === 0,
      );
      await queue.wakeCreated([ids[0]!]);
      await eventually(() => handled.length === 4);
      expect(handled.filter((id) => id === ids[0])).toHaveLength(2);
    } finally {
      await consumer?.close();
      await queue.close();
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
    }
  });
});

describe('a producer with Redis unreachable', () => {
  it('fails an enqueue and a ping quickly instead of hanging', async () => {
    const dead = createTaskQueue({ redis: { url: 'redis://127.0.0.1:1' }, commandTimeoutMs: 300 });
    await expect(dead.wake(newTaskId(), 'created')).rejects.toThrow();
    await expect(dead.ping()).rejects.toThrow();
    await dead.close();
  });
});

describe('the latest-wake-up pointer', () => {
  it('is deleted when a consumer takes the job it names, and kept when it names a newer one', async () => {
    const prefix = `${redis.prefix}-taken`;
    const queue = createTaskQueue({ redis: { url: redis.url }, prefix });
    const handled: WakeUpJob[] = [];
    const consumer = createTaskConsumer({
      redis: { url: redis.url },
      prefix,
      concurrency: 2,
      handle: (job) => {
        handled.push(job);
        return Promise.resolve();
      },
    });
    try {
      await consumer.waitUntilReady();
      const resumed = newTaskId();
      await queue.wake(resumed, 'resumed');
      await eventually(() => handled.some((job) => job.taskId === resumed));
      await eventually(async () => (await admin.exists(latestJobKey(prefix, resumed))) === 0);

      // The pointer moved on to a newer wake-up before this one was taken: it stays.
      const superseded = newTaskId();
      await queue.wake(superseded, 'swept', { delayMs: 300 });
      const newer = jobIdFor(superseded, 'swept');
      await admin.set(latestJobKey(prefix, superseded), newer);
      await eventually(() => handled.some((job) => job.taskId === superseded));
      // The consumer's delete is not awaited: give it the time it would have taken.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await admin.get(latestJobKey(prefix, superseded))).toBe(newer);
    } finally {
      await consumer.close();
      await queue.close();
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
    }
  });

  it('is written only for wake-ups whose job id is not the task id, not for the first one', async () => {
    const queue = createTaskQueue({ redis: { url: redis.url }, prefix: `${redis.prefix}-ptr` });
    try {
      const taskId = newTaskId();
      await queue.wake(taskId, 'created');
      // The created job is found by its id alone: no 24 h key per task for it.
      expect(await admin.exists(latestJobKey(`${redis.prefix}-ptr`, taskId))).toBe(0);
      expect(await queue.hasPendingJob(taskId)).toBe(true);

      const swept = newTaskId();
      await queue.wakeMany([swept], 'swept');
      expect(await admin.get(latestJobKey(`${redis.prefix}-ptr`, swept))).toMatch(
        new RegExp(`^${swept}\\.swept\\.`),
      );
      expect(await queue.hasPendingJob(swept)).toBe(true);
      expect(await queue.pendingJobs([taskId, swept, newTaskId()])).toEqual(
        new Set([taskId, swept]),
      );
    } finally {
      await queue.close();
      const keys = await admin.keys(`${redis.prefix}-ptr*`);
      if (keys.length > 0) await admin.del(...keys);
    }
  });
});
