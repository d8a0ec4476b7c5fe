import { Socket } from 'node:net';
import { newTaskId } from '@mcp-tasks/tasks';
import { createTestRedis, type TestRedis } from '@mcp-tasks/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_TASKS_PER_JOB, WakeUpJobSchema, jobIdFor, type WakeUpJob } from './wake-up-job.js';
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

describe('wakeBatch: one job per batch of wake-ups (ADR 0013)', () => {
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const prefix of prefixes) {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
    }
  });
  const setUp = (name: string) => {
    const prefix = `${redis.prefix}-${name}`;
    prefixes.push(prefix);
    return { prefix, queue: createTaskQueue({ redis: { url: redis.url }, prefix }) };
  };
  const consume = (
    prefix: string,
    concurrency: number,
    handle: (job: WakeUpJob) => Promise<void>,
  ) => createTaskConsumer({ redis: { url: redis.url }, prefix, concurrency, handle });
  const jobData = async (prefix: string): Promise<unknown[]> => {
    const ids = await admin.lrange(`${prefix}:mcp-tasks-run:wait`, 0, -1);
    const data = await Promise.all(
      ids.map((id) => admin.hget(`${prefix}:mcp-tasks-run:${id}`, 'data')),
    );
    return data.map((json) => JSON.parse(json!) as unknown);
  };

  it('adds one job for a batch, with a pointer per task that a lookup follows and the completion of the job deletes', async () => {
    const { prefix, queue } = setUp('batch');
    const handled: WakeUpJob[] = [];
    let consumer: TaskConsumer | undefined;
    try {
      const ids = [newTaskId(), newTaskId(), newTaskId()];
      await queue.wakeBatch(ids, 'created');
      expect(await jobData(prefix)).toEqual([{ taskIds: ids, reason: 'created' }]);
      const [jobId] = await admin.lrange(`${prefix}:mcp-tasks-run:wait`, 0, -1);
      expect(jobId).toMatch(new RegExp(`^${ids[0]}\\.created-batch\\.`));
      for (const id of ids) expect(await admin.get(latestJobKey(prefix, id))).toBe(jobId);
      expect(await queue.pendingJobs([...ids, newTaskId()])).toEqual(new Set(ids));

      consumer = consume(prefix, 3, (job) => {
        handled.push(job);
        return Promise.resolve();
      });
      await eventually(() => handled.length === 3);
      expect(handled).toEqual(ids.map((taskId) => ({ taskId, reason: 'created' })));
      await eventually(
        async () => (await admin.exists(...ids.map((id) => latestJobKey(prefix, id)))) === 0,
      );
      expect(await queue.pendingJobs(ids)).toEqual(new Set());
      // The job is completed and removed once its wake-ups started.
      await eventually(async () => (await admin.exists(`${prefix}:mcp-tasks-run:${jobId}`)) === 0);
    } finally {
      await consumer?.close();
      await queue.close();
    }
  });

  it('sends a later wake-up or a batch with its pointers in one write to Redis', async () => {
    const { prefix, queue } = setUp('one-write');
    const redisPort = Number(new URL(redis.url).port || 6379);
    // Every write this process makes to Redis while `send` runs (nothing else talks to it then).
    const writesDuring = async (send: () => Promise<void>): Promise<number> => {
      const write = vi.spyOn(Socket.prototype, 'write');
      try {
        await send();
        const sockets = write.mock.contexts as Socket[];
        return sockets.filter((socket) => socket.remotePort === redisPort).length;
      } finally {
        write.mockRestore();
      }
    };
    try {
      // Connected, and BullMQ's add script loaded (a first add may be refused NOSCRIPT, then sent
      // again as EVAL: two writes that say nothing of ours).
      await queue.wake(newTaskId(), 'resumed');
      const lone = newTaskId();
      expect(await writesDuring(() => queue.wake(lone, 'resumed'))).toBe(1);
      const loneJob = await admin.get(latestJobKey(prefix, lone));
      expect(loneJob).toMatch(new RegExp(`^${lone}\\.resumed\\.`));
      expect(await admin.lrange(`${prefix}:mcp-tasks-run:wait`, 0, 0)).toEqual([loneJob]);

      const ids = [newTaskId(), newTaskId(), newTaskId()];
      expect(await writesDuring(() => queue.wakeBatch(ids, 'resumed'))).toBe(1);
      const [batchJob] = await admin.lrange(`${prefix}:mcp-tasks-run:wait`, 0, 0);
      expect(batchJob).toMatch(new RegExp(`^${ids[0]}\\.resumed-batch\\.`));
      for (const id of ids) expect(await admin.get(latestJobKey(prefix, id))).toBe(batchJob);
      // The queue's default options still apply to jobs added this way.
      expect(await admin.hget(`${prefix}:mcp-tasks-run:${batchJob}`, 'opts')).toContain(
        '"removeOnComplete":true',
      );
    } finally {
      await queue.close();
    }
  });

  it('keeps a lone wake-up idempotent by task id, and splits a batch into jobs of 16', async () => {
    const { prefix, queue } = setUp('split');
    try {
      const lone = newTaskId();
      await queue.wakeBatch([lone, lone], 'created');
      await queue.wakeBatch([lone], 'created');
      expect(await admin.lrange(`${prefix}:mcp-tasks-run:wait`, 0, -1)).toEqual([lone]);
      expect(await admin.exists(latestJobKey(prefix, lone))).toBe(0);

      const ids = Array.from({ length: MAX_TASKS_PER_JOB + 1 }, () => newTaskId());
      await queue.wakeBatch(ids, 'created');
      const data = await jobData(prefix);
      expect(data).toHaveLength(3);
      expect(data).toContainEqual({ taskIds: ids.slice(0, MAX_TASKS_PER_JOB), reason: 'created' });
      // The run of one left over is an ordinary job: its id is the task id, no pointer.
      expect(data).toContainEqual({ taskId: ids[MAX_TASKS_PER_JOB], reason: 'created' });
      expect(await admin.lrange(`${prefix}:mcp-tasks-run:wait`, 0, -1)).toContain(
        ids[MAX_TASKS_PER_JOB],
      );
      expect(await queue.pendingJobs(ids)).toEqual(new Set(ids));
    } finally {
      await queue.close();
    }
  });

  it('carries resumes in jobs of 16 with their reason, each task found pending through its pointer and run once', async () => {
    const { prefix, queue } = setUp('resumed');
    const handled: WakeUpJob[] = [];
    let consumer: TaskConsumer | undefined;
    try {
      const ids = Array.from({ length: 2 * MAX_TASKS_PER_JOB + 1 }, () => newTaskId());
      await queue.wakeBatch(ids, 'resumed');
      const data = await jobData(prefix);
      // ceil(33 / 16) jobs: two batches and the run of one left over, a lone resumed job.
      expect(data).toHaveLength(3);
      expect(data).toContainEqual({ taskIds: ids.slice(0, MAX_TASKS_PER_JOB), reason: 'resumed' });
      expect(data).toContainEqual({
        taskIds: ids.slice(MAX_TASKS_PER_JOB, 2 * MAX_TASKS_PER_JOB),
        reason: 'resumed',
      });
      expect(data).toContainEqual({ taskId: ids[2 * MAX_TASKS_PER_JOB], reason: 'resumed' });
      const jobIds = await admin.lrange(`${prefix}:mcp-tasks-run:wait`, 0, -1);
      for (const id of ids) expect(jobIds).toContain(await admin.get(latestJobKey(prefix, id)));
      expect(await admin.get(latestJobKey(prefix, ids[0]!))).toMatch(
        new RegExp(`^${ids[0]}\\.resumed-batch\\.`),
      );
      expect(await queue.pendingJobs([...ids, newTaskId()])).toEqual(new Set(ids));
      expect(await queue.hasPendingJob(ids[MAX_TASKS_PER_JOB + 3]!)).toBe(true);

      consumer = consume(prefix, 4, (job) => {
        handled.push(job);
        return Promise.resolve();
      });
      await eventually(() => handled.length === ids.length);
      // Give a second delivery the time it would take to show.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(handled.map((job) => job.taskId).sort()).toEqual([...ids].sort());
      expect(handled.every((job) => job.reason === 'resumed')).toBe(true);
      await eventually(
        async () => (await admin.exists(...ids.map((id) => latestJobKey(prefix, id)))) === 0,
      );
      expect(await queue.pendingJobs(ids)).toEqual(new Set());
    } finally {
      await consumer?.close();
      await queue.close();
    }
  });

  it('sends a lone resume as wake(id, "resumed") did, and counts a repeated resume as two wake-ups', async () => {
    const { prefix, queue } = setUp('resumed-lone');
    try {
      const lone = newTaskId();
      await queue.wakeBatch([lone], 'resumed');
      const [loneJob] = await admin.lrange(`${prefix}:mcp-tasks-run:wait`, 0, -1);
      expect(loneJob).toMatch(new RegExp(`^${lone}\\.resumed\\.`));
      expect(await jobData(prefix)).toEqual([{ taskId: lone, reason: 'resumed' }]);
      expect(await admin.get(latestJobKey(prefix, lone))).toBe(loneJob);
      expect(await queue.hasPendingJob(lone)).toBe(true);

      // Each resume made a task runnable; a credit claims the fairest task, so none is dropped.
      const twice = newTaskId();
      await queue.wakeBatch([twice, twice], 'resumed');
      expect(await jobData(prefix)).toContainEqual({ taskIds: [twice, twice], reason: 'resumed' });
    } finally {
      await queue.close();
    }
  });

  it('runs no more wake-ups at once than its concurrency, and fetches nothing while it holds credits', async () => {
    const { prefix, queue } = setUp('slots');
    const started: string[] = [];
    let runningNow = 0;
    let mostAtOnce = 0;
    const gates = new Map<string, () => void>();
    const consumer = consume(prefix, 2, async (job) => {
      started.push(job.taskId);
      runningNow += 1;
      mostAtOnce = Math.max(mostAtOnce, runningNow);
      await new Promise<void>((resolve) => gates.set(job.taskId, resolve));
      runningNow -= 1;
    });
    try {
      await consumer.waitUntilReady();
      const batch = Array.from({ length: 5 }, () => newTaskId());
      await queue.wakeBatch(batch, 'created');
      await eventually(() => started.length === 2);
      const later = newTaskId();
      await queue.wake(later, 'created');
      // Both slots busy and three credits held: the later job waits in Redis.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(started).toEqual(batch.slice(0, 2));
      expect(await admin.lrange(`${prefix}:mcp-tasks-run:wait`, 0, -1)).toEqual([later]);

      // Each freed slot starts the next credit of the batch, then the later job.
      for (let done = 0; done < 6; done += 1) {
        gates.get(started[done]!)!();
        await eventually(() => started.length === Math.min(6, done + 3));
      }
      expect(started).toEqual([...batch, later]);
      expect(mostAtOnce).toBe(2);
    } finally {
      for (const open of gates.values()) open();
      await consumer.close();
      await queue.close();
    }
  });

  it('completes a job and takes the next waiting one in one script while a slot is free', async () => {
    // A job taken and finished first on another prefix loads BullMQ's scripts into Redis, so each
    // script below is one EVALSHA, not an EVALSHA refused (NOSCRIPT) and then an EVAL.
    const warm = setUp('chain-warm');
    const warmed: string[] = [];
    const warmConsumer = consume(warm.prefix, 1, (job) => {
      warmed.push(job.taskId);
      return Promise.resolve();
    });
    await warm.queue.wake(newTaskId(), 'created');
    await eventually(() => warmed.length === 1);
    await warmConsumer.close();
    await warm.queue.close();

    const { prefix, queue } = setUp('chain');
    const ids = Array.from({ length: 12 }, () => newTaskId());
    await queue.wakeMany(ids, 'created'); // twelve jobs of one wake-up each
    const watch = await watchConsumer(prefix);
    const handled: string[] = [];
    const consumer = consume(prefix, 4, (job) => {
      handled.push(job.taskId);
      return Promise.resolve();
    });
    try {
      const scripts = () => watch.sent.filter((sent) => sent !== 'wait');
      const finishes = () => scripts().filter((script) => script === 'finish').length;
      await eventually(() => handled.length === ids.length && finishes() === ids.length);
      expect([...handled].sort()).toEqual([...ids].sort());
      // One take for the first job; each completion took the next (before: a take per job). An
      // empty take may follow the last finish (a marker left from the adds), not before it.
      const upToLastFinish = scripts().slice(0, scripts().lastIndexOf('finish') + 1);
      expect(upToLastFinish).toEqual(['take', ...ids.map(() => 'finish')]);
      expect(await admin.llen(`${prefix}:mcp-tasks-run:wait`)).toBe(0);
      expect(watch.errors).toEqual([]);
    } finally {
      await consumer.close();
      await queue.close();
      watch.stop();
    }
  });

  /**
   * What a consumer sends on `prefix`, in order, seen through MONITOR: a blocking wait for the
   * marker; a take (moveToActive, which names the marker); a finish (moveToFinished, which names
   * the completed set). An add names both and the id counter too; the stalled check has its own
   * key: neither is recorded.
   */
  const watchConsumer = async (prefix: string) => {
    // Listeners before it connects: ioredis reports a MONITOR line that arrives outside its
    // 'monitoring' state (in the same chunk as MONITOR's own OK, or after disconnect) as a
    // "Command queue state error", and other clients' traffic (CI runs the bench beside this
    // file) makes one likely. Such lines come before the sentinel or after the test.
    const monitor = admin.duplicate({ monitor: true, lazyConnect: true });
    const errors: Error[] = [];
    monitor.on('error', (error: Error) => {
      if (!error.message.startsWith('Command queue state error')) errors.push(error);
    });
    const sent: ('take' | 'finish' | 'wait')[] = [];
    let watching = false;
    const sentinel = `${prefix}:monitor-sentinel`;
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args.includes(sentinel)) watching = true;
      const command = args[0]?.toLowerCase() ?? '';
      const keys = args.filter((arg) => arg.startsWith(`${prefix}:`));
      if (command === 'bzpopmin' && keys.length > 0) sent.push('wait');
      if (!['evalsha', 'eval'].includes(command)) return;
      if (keys.some((key) => key.endsWith(':id') || key.endsWith(':stalled-check'))) return;
      if (keys.some((key) => key.endsWith(':completed'))) sent.push('finish');
      else if (keys.some((key) => key.endsWith(':marker'))) sent.push('take');
    });
    await monitor.connect();
    // MONITOR is on once it shows a command sent after it.
    await eventually(async () => (await admin.get(sentinel)) === null && watching);
    return {
      sent,
      errors,
      waits: () => sent.filter((each) => each === 'wait').length,
      stop: () => monitor.disconnect(),
    };
  };

  /** A consumer on a prefix of its own that records the task ids it runs, watched (watchConsumer). */
  const watchedConsumer = async (name: string, concurrency: number, lockDurationMs?: number) => {
    const { prefix, queue } = setUp(name);
    const watch = await watchConsumer(prefix);
    const handled: string[] = [];
    const consumer = createTaskConsumer({
      redis: { url: redis.url },
      prefix,
      concurrency,
      lockDurationMs,
      handle: (job) => {
        handled.push(job.taskId);
        return Promise.resolve();
      },
    });
    return {
      prefix,
      queue,
      watch,
      handled,
      consumer,
      active: () => admin.lrange(`${prefix}:mcp-tasks-run:active`, 0, -1),
      /** Wakes `id` once the consumer waits for a job (its next BZPOPMIN); waits until it runs. */
      wakeWhenIdle: async (id: string) => {
        const waitsBefore = watch.waits();
        await eventually(() => watch.waits() > 0);
        await queue.wake(id, 'created');
        await eventually(() => handled.includes(id) && watch.waits() > Math.max(waitsBefore, 1));
      },
      close: async () => {
        await consumer.close();
        await queue.close();
        watch.stop();
      },
    };
  };

  it('when idle, completes a job only once the next one comes, taking it in the same script', async () => {
    const { prefix, watch, active, wakeWhenIdle, close } = await watchedConsumer('idle-chain', 4);
    try {
      const ids = Array.from({ length: 4 }, () => newTaskId());
      for (const id of ids) {
        await wakeWhenIdle(id);
        // The job just taken is held, active, while the consumer waits for the next.
        expect(await active()).toEqual([id]);
      }
      // The first job was taken by a blocking fetch (its wait, then a take); each later one by the
      // completion of the one before, which waited for it. Before: a wait, a take and a finish
      // that found nothing, per job.
      expect(watch.sent.slice(watch.sent.lastIndexOf('take') - 1)).toEqual([
        'wait',
        'take',
        'wait',
        ...ids.slice(1).flatMap(() => ['finish', 'wait']),
      ]);
      // Nothing comes: the held job is completed when BullMQ's blocking wait (5 s) ends.
      await eventually(async () => (await active()).length === 0, 10_000);
      expect(await admin.exists(`${prefix}:mcp-tasks-run:${ids[3]!}`)).toBe(0);
    } finally {
      await close();
    }
  }, 20_000);

  it('ends a hold when a delayed wake-up comes due, not when the 5 s wait does', async () => {
    const { queue, watch, handled, wakeWhenIdle, close } = await watchedConsumer('idle-delayed', 2);
    try {
      // A retry due in a second, its marker popped by the idle consumer (which then waits until
      // it is due); then a job to take and hold, whose take reports the retry's due time.
      const [retried, next] = [newTaskId(), newTaskId()];
      await eventually(() => watch.waits() > 0);
      const waitsBefore = watch.waits();
      await queue.wake(retried, 'retry', { delayMs: 1_000 });
      await eventually(() => watch.waits() > waitsBefore);
      const added = Date.now();
      await wakeWhenIdle(next);
      await eventually(() => handled.includes(retried), 10_000);
      // Due at 1 s; a hold bounded by the 5 s wait alone would have run it after 5 s.
      expect(Date.now() - added).toBeLessThan(3_500);
    } finally {
      await close();
    }
  });

  it('holds a job no longer than half its lock when the lock is short (a short lease)', async () => {
    const { active, wakeWhenIdle, close } = await watchedConsumer('idle-short-lock', 2, 2_000);
    try {
      const id = newTaskId();
      await wakeWhenIdle(id);
      const heldAt = Date.now();
      expect(await active()).toEqual([id]);
      await eventually(async () => (await active()).length === 0, 10_000);
      // Half of the 2 s lock; BullMQ's own wait would have held it 5 s, past the lock.
      expect(Date.now() - heldAt).toBeLessThan(3_000);
    } finally {
      await close();
    }
  });

  it('completes the job it holds for the next one when it closes, without waiting the wait out', async () => {
    const { prefix, consumer, active, wakeWhenIdle, close } = await watchedConsumer(
      'idle-close',
      2,
    );
    try {
      const id = newTaskId();
      await wakeWhenIdle(id);
      expect(await active()).toEqual([id]);
      const started = Date.now();
      await consumer.close();
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(await active()).toEqual([]);
      expect(await admin.exists(`${prefix}:mcp-tasks-run:${id}`)).toBe(0);
    } finally {
      await close();
    }
  });

  it("starts a batch's wake-ups in one go while slots are free, so their claims can share a statement", async () => {
    const { prefix, queue } = setUp('one-go');
    const ids = [newTaskId(), newTaskId(), newTaskId()];
    await queue.wakeBatch(ids, 'created');
    // A microtask queued at the first start runs before a later start only if the consumer
    // awaited something in between: the starts then share a claim statement only if the claim
    // batcher happens to flush late enough.
    const startedAfterAPause: boolean[] = [];
    let paused = false;
    const consumer = consume(prefix, 4, () => {
      startedAfterAPause.push(paused);
      if (startedAfterAPause.length === 1) queueMicrotask(() => (paused = true));
      return Promise.resolve();
    });
    try {
      await eventually(() => startedAfterAPause.length === ids.length);
      expect(startedAfterAPause).toEqual([false, false, false]);
    } finally {
      await consumer.close();
      await queue.close();
    }
  });

  it('starts every wake-up of a batch at once when slots are free: a long one holds no other', async () => {
    const { prefix, queue } = setUp('long');
    const started: string[] = [];
    let openLong!: () => void;
    const long = new Promise<void>((resolve) => (openLong = resolve));
    const consumer = consume(prefix, 4, async (job) => {
      started.push(job.taskId);
      if (started.length === 1) await long;
    });
    try {
      const batch = [newTaskId(), newTaskId(), newTaskId()];
      await queue.wakeBatch(batch, 'created');
      await eventually(() => started.length === 3);
      expect(started).toEqual(batch);
    } finally {
      openLong();
      await consumer.close();
      await queue.close();
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
  /** A consumer on `prefix` that records each wake-up it is handed. */
  const recordingConsumer = (prefix: string, handled: WakeUpJob[]) =>
    createTaskConsumer({
      redis: { url: redis.url },
      prefix,
      concurrency: 2,
      handle: (job) => {
        handled.push(job);
        return Promise.resolve();
      },
    });

  it('is deleted when a consumer has taken and completed the job it names, and kept when it names a newer one', async () => {
    const prefix = `${redis.prefix}-taken`;
    const queue = createTaskQueue({ redis: { url: redis.url }, prefix });
    const handled: WakeUpJob[] = [];
    const consumer = recordingConsumer(prefix, handled);
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

  it('is deleted in the same write to Redis as the completion of the job it names', async () => {
    const prefix = `${redis.prefix}-one-flush`;
    const queue = createTaskQueue({ redis: { url: redis.url }, prefix });
    const handled: WakeUpJob[] = [];
    const redisPort = Number(new URL(redis.url).port || 6379);
    // What this process hands the kernel for Redis, one entry per system call: corked commands
    // leave as one _writev, a command sent alone as a _write.
    const writev = vi.spyOn(Socket.prototype, '_writev');
    const write = vi.spyOn(Socket.prototype, '_write');
    const flushesToRedis = (): string[] => {
      const flushes = [
        ...writev.mock.calls.map((args, index) => ({
          socket: writev.mock.contexts[index] as Socket,
          text: args[0].map(({ chunk }) => String(chunk)).join(''),
        })),
        ...write.mock.calls.map((args, index) => ({
          socket: write.mock.contexts[index] as Socket,
          text: String(args[0]),
        })),
      ];
      // The consumer's: not this test's own reads through `admin`.
      return flushes
        .filter(({ socket }) => socket.remotePort === redisPort && socket !== admin.stream)
        .map(({ text }) => text);
    };
    let consumer: TaskConsumer | undefined;
    try {
      const resumed = newTaskId();
      await queue.wake(resumed, 'resumed');
      const pointer = latestJobKey(prefix, resumed);
      const jobId = await admin.get(pointer);
      expect(jobId).toMatch(new RegExp(`^${resumed}\\.resumed\\.`));
      // From here on only the consumer writes to Redis (and `admin`, left out).
      writev.mockClear();
      write.mockClear();
      consumer = recordingConsumer(prefix, handled);
      await eventually(() => handled.some((job) => job.taskId === resumed));
      await eventually(async () => (await admin.exists(pointer)) === 0);
      await eventually(async () => (await admin.exists(`${prefix}:mcp-tasks-run:${jobId}`)) === 0);
      const withPointer = flushesToRedis().filter((text) => text.includes(pointer));
      expect(withPointer).toHaveLength(1);
      // The same write carries the completion: BullMQ's moveToFinished script (EVAL the first
      // time on a connection, EVALSHA after) on the job's key and the completed set.
      expect(withPointer[0]).toContain(`${prefix}:mcp-tasks-run:${jobId}`);
      expect(withPointer[0]).toContain(`${prefix}:mcp-tasks-run:completed`);
    } finally {
      writev.mockRestore();
      write.mockRestore();
      await consumer?.close();
      await queue.close();
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
    }
  });

  it('of a batch is deleted when the batch is taken, but not where a newer wake-up moved it on', async () => {
    const prefix = `${redis.prefix}-taken-batch`;
    const queue = createTaskQueue({ redis: { url: redis.url }, prefix });
    const handled: WakeUpJob[] = [];
    let consumer: TaskConsumer | undefined;
    try {
      const [answered, answeredTwice] = [newTaskId(), newTaskId()];
      await queue.wakeBatch([answered, answeredTwice], 'resumed');
      // A second answer's wake-up, added while the batch still waits, moved one pointer on.
      const newer = jobIdFor(answeredTwice, 'resumed');
      await admin.set(latestJobKey(prefix, answeredTwice), newer);
      consumer = recordingConsumer(prefix, handled);
      await eventually(() => handled.length === 2);
      await eventually(async () => (await admin.exists(latestJobKey(prefix, answered))) === 0);
      // The delete of both went in one script: the other pointer was left as it was.
      expect(await admin.get(latestJobKey(prefix, answeredTwice))).toBe(newer);
    } finally {
      await consumer?.close();
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
