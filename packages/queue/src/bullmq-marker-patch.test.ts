// patches/bullmq@*.patch: taking a job re-adds the queue's wake-up marker only while another job
// waits. Upstream re-adds it always, so at low load every job cost its worker one more BZPOPMIN
// and one more moveToActive. The take's reply says the same in a 5th element (1: another job
// waits), and a 6th (when the next delayed job is due), which the consumer reads to hold a job
// until the next one comes or a delayed one is due (task-consumer.ts).
// These tests drive BullMQ's own scripts on real Redis; the marker is removed by hand first, as
// a worker's BZPOPMIN removes it before it calls moveToActive.
import { createTestRedis, type TestRedis } from '@mcp-tasks/testing';
import { Queue, Worker } from 'bullmq';
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

  it("says in its reply whether another job waits, for a take and for a completion's take", async () => {
    await queue.addBulk(
      ['one', 'two', 'three'].map((jobId) => ({ name: 'run', data: {}, opts: { jobId } })),
    );
    const client = await worker.client;
    const taken = (await worker.scripts.moveToActive(client, 't6')) as unknown[];
    expect(taken[1]).toBe('one');
    expect(taken[4]).toBe(1);
    const job = await worker.getNextJob('t7', { block: false });
    expect(job?.id).toBe('two');
    // Completing 'two' takes 'three', the last one waiting.
    const next = (await job!.moveToCompleted(undefined, 't7', true)) as unknown[];
    expect(next[1]).toBe('three');
    expect(next[4]).toBe(0);
    // No delayed job: the 6th element, when the next one is due, is 0.
    expect(next[5]).toBe(0);
  });

  it('says in its reply when the next delayed job is due', async () => {
    const before = Date.now();
    await queue.add('later', {}, { jobId: 'due-later', delay: 60_000 });
    await queue.add('run', {}, { jobId: 'due-now' });
    const client = await worker.client;
    const taken = (await worker.scripts.moveToActive(client, 't8')) as unknown[];
    expect(taken[1]).toBe('due-now');
    const dueAt = taken[5] as number;
    expect(dueAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(dueAt).toBeLessThanOrEqual(Date.now() + 60_000);
    await (await queue.getJob('due-later'))?.remove();
  });
});
