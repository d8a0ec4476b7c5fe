// patches/bullmq@*.patch: taking a job re-adds the queue's wake-up marker only while another job
// waits. Upstream re-adds it always, so at low load every job cost its worker one more BZPOPMIN
// and one more moveToActive. These tests drive BullMQ's own scripts on real Redis; the marker is
// removed by hand first, as a worker's BZPOPMIN removes it before it calls moveToActive.
// The patch also tells the worker when it took the last job, so that it blocks for the next one
// at once; upstream asked again with a moveToActive that could only come back empty.
import { createTestRedis, type TestRedis } from '@mcp-tasks/testing';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let redis: TestRedis;
let admin: Redis;
let queue: Queue;
let worker: Worker;
let prefix: string;

beforeAll(async () => {
  redis = await createTestRedis('marker');
  admin = new Redis(redis.url);
  prefix = redis.prefix;
  const connection = { url: redis.url, maxRetriesPerRequest: null };
  queue = new Queue('marker', { connection, prefix });
  // Fetched by hand (no processor, autorun off), so nothing else moves jobs or markers.
  worker = new Worker('marker', null, { connection, prefix, autorun: false });
  await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
});

afterAll(async () => {
  await worker.close();
  await queue.close();
  const keys = await admin.keys(`${prefix}*`);
  if (keys.length > 0) await admin.del(...keys);
  admin.disconnect();
});

const markerKey = () => `${prefix}:marker:marker`;

async function takeOneAfterTheMarkerWasPopped(token: string) {
  await admin.del(markerKey());
  const job = await worker.getNextJob(token, { block: false });
  return { job, marker: await admin.zrange(markerKey(), 0, -1, 'WITHSCORES') };
}

describe('the patched BullMQ marker', () => {
  it('taking the only waiting job leaves no marker, so no worker wakes for nothing', async () => {
    await queue.add('run', { n: 1 }, { jobId: 'only' });
    const { job, marker } = await takeOneAfterTheMarkerWasPopped('t1');
    expect(job?.id).toBe('only');
    expect(marker).toEqual([]);
  });

  it('taking one of several waiting jobs leaves the marker for the next worker', async () => {
    await queue.addBulk([
      { name: 'run', data: { n: 2 }, opts: { jobId: 'first' } },
      { name: 'run', data: { n: 3 }, opts: { jobId: 'second' } },
    ]);
    const first = await takeOneAfterTheMarkerWasPopped('t2');
    expect(first.job?.id).toBe('first');
    expect(first.marker).toEqual(['0', '0']);
    const second = await takeOneAfterTheMarkerWasPopped('t3');
    expect(second.job?.id).toBe('second');
    expect(second.marker).toEqual([]);
  });

  it('a prioritized job left waiting keeps the marker too', async () => {
    await queue.addBulk([
      { name: 'run', data: { n: 4 }, opts: { jobId: 'urgent', priority: 1 } },
      { name: 'run', data: { n: 5 }, opts: { jobId: 'later', priority: 2 } },
    ]);
    const first = await takeOneAfterTheMarkerWasPopped('t4');
    expect(first.job?.id).toBe('urgent');
    expect(first.marker).toEqual(['0', '0']);
    const second = await takeOneAfterTheMarkerWasPopped('t5');
    expect(second.job?.id).toBe('later');
    expect(second.marker).toEqual([]);
  });
});

/** Every moveToActive a worker sends for `queueName` (MONITOR sees the script's keys). */
async function countMoveToActive(
  queueName: string,
): Promise<{ count: () => number; stop: () => void }> {
  const monitor = await admin.monitor();
  let count = 0;
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args[0] === 'evalsha' && args[2] === '11' && args[3] === `${prefix}:${queueName}:wait`)
      count += 1;
  });
  return { count: () => count, stop: () => monitor.disconnect() };
}

describe('the patched BullMQ worker', () => {
  const connection = () => ({ url: redis.url, maxRetriesPerRequest: null });

  /** A running worker on its own queue, and the jobs it finished in order. */
  async function runningWorker(queueName: string) {
    const finished: string[] = [];
    const running = new Worker(queueName, (job: Job) => Promise.resolve(job.id), {
      connection: connection(),
      prefix,
      concurrency: 4,
      // Long enough that a worker blocked without cause would miss the test's deadlines.
      drainDelay: 30,
    });
    running.on('completed', (job: Job) => finished.push(job.id!));
    const jobs = new Queue(queueName, { connection: connection(), prefix });
    await Promise.all([running.waitUntilReady(), jobs.waitUntilReady()]);
    const finishedAll = async (ids: string[], timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (!ids.every((id) => finished.includes(id))) {
        if (Date.now() > deadline)
          throw new Error(`not finished: ${ids.join(', ')} (${finished.join(', ')})`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    return {
      jobs,
      finishedAll,
      close: async () => {
        await running.close();
        await jobs.close();
      },
    };
  }

  it('takes a lone job with one moveToActive, then still wakes for the next one', async () => {
    const { jobs, finishedAll, close } = await runningWorker('lone');
    // The idle worker's first, empty moveToActive has gone out: it is blocked in BZPOPMIN.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const monitor = await countMoveToActive('lone');
    try {
      await jobs.add('run', {}, { jobId: 'a' });
      await finishedAll(['a'], 5_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(monitor.count()).toBe(1);
      await jobs.add('run', {}, { jobId: 'b' });
      await finishedAll(['b'], 5_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(monitor.count()).toBe(2);
    } finally {
      monitor.stop();
      await close();
    }
  });

  it('with a delayed job pending, asks again as upstream does, so the delayed job runs on time', async () => {
    const { jobs, finishedAll, close } = await runningWorker('delayed');
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await jobs.add('run', {}, { jobId: 'later', delay: 500 });
      await jobs.add('run', {}, { jobId: 'now' });
      // drainDelay is 30 s: a worker that blocked without the delayed job's time would miss this.
      await finishedAll(['now', 'later'], 5_000);
    } finally {
      await close();
    }
  });
});
