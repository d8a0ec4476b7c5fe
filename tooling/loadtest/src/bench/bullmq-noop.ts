import { Queue, Worker } from 'bullmq';
import { setTimeout as sleep } from 'node:timers/promises';
import { tcpSegmentsSent } from './cpu.js';

export interface BullmqResult {
  jobsPerS: number;
  concurrency: number;
  /**
   * TCP segments the whole machine sent per job completed in the window (tcpSegmentsSent), in
   * the same unit as the end-to-end lines' tcpSegmentsPerTask. The producers may add more jobs
   * than the worker completes meanwhile, so read it as an upper bound. Absent from older results.
   */
  tcpSegmentsPerJob?: number;
}

/**
 * Raw BullMQ on the same Redis, own prefix: `concurrency` producers each `add` one job at a time
 * while one Worker (same concurrency) runs a no-op; counts jobs completed in the window.
 * Producer and worker share this process.
 */
export async function runBullmqNoop(options: {
  redisUrl: string;
  prefix: string;
  durationS: number;
  warmupS: number;
  concurrency: number;
}): Promise<BullmqResult> {
  // Plain options: BullMQ opens its own connections, as a user of BullMQ alone would.
  const url = new URL(options.redisUrl);
  const connection = {
    host: url.hostname,
    port: Number(url.port || 6379),
    db: Number(url.pathname.slice(1) || 0),
    maxRetriesPerRequest: null,
  };
  const queue = new Queue('bench-noop', { connection, prefix: options.prefix });
  let completed = 0;
  const worker = new Worker('bench-noop', () => Promise.resolve(), {
    connection,
    prefix: options.prefix,
    concurrency: options.concurrency,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
  });
  worker.on('completed', () => (completed += 1));
  // The warm-up starts once the worker takes jobs: on a busy machine connecting alone can
  // outlast a short warm-up and window (the smoke's 1 s each measured 0 jobs/s).
  await Promise.all([worker.waitUntilReady(), queue.waitUntilReady()]);
  let producing = true;
  const producers = Array.from({ length: options.concurrency }, async () => {
    while (producing) {
      await queue.add('noop', {}, { removeOnComplete: true, removeOnFail: true });
    }
  });
  try {
    const firstJobBy = performance.now() + 30_000;
    while (completed === 0) {
      if (performance.now() > firstJobBy) {
        const counts = await queue.getJobCounts('waiting', 'active', 'completed', 'failed');
        throw new Error(`raw BullMQ: no job completed in 30 s (jobs: ${JSON.stringify(counts)})`);
      }
      await sleep(10);
    }
    await sleep(options.warmupS * 1_000);
    const before = completed;
    const segmentsBefore = tcpSegmentsSent();
    const started = performance.now();
    await sleep(options.durationS * 1_000);
    // A starved second can complete nothing (the CI smoke's 1 s window, with nine checks at once,
    // read 0 jobs/s after jobs had run): the window then goes on until one completes, at most
    // 30 s, so the figure is a rate over a longer window, not a zero.
    const windowBy = started + 30_000;
    while (completed === before && performance.now() < windowBy) await sleep(10);
    const jobs = completed - before;
    const seconds = (performance.now() - started) / 1_000;
    const segments = tcpSegmentsSent() - segmentsBefore;
    return {
      jobsPerS: jobs / seconds,
      concurrency: options.concurrency,
      ...(jobs > 0 ? { tcpSegmentsPerJob: segments / jobs } : {}),
    };
  } finally {
    producing = false;
    await Promise.allSettled(producers);
    await worker.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
}
