import { newTaskId } from '@mcp-tasks/tasks';
import {
  redisClusterUnavailableReason,
  startRedisCluster,
  type RedisCluster,
} from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTaskConsumer } from './task-consumer.js';
import { createTaskQueue } from './task-queue.js';

/**
 * Failover of the master that holds the queue's slot, on a real Redis Cluster started here:
 * what the sweeper relies on afterwards (a wake-up sent after the failover is delivered).
 */
const unavailable = redisClusterUnavailableReason();
if (unavailable !== null && process.env.CI)
  throw new Error(`Redis Cluster tests cannot run in CI: ${unavailable}`);

let cluster: RedisCluster;
let endpoint: { clusterNodes: { host: string; port: number }[] };

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

describe.skipIf(unavailable !== null)(`failover on a Redis Cluster ${unavailable ?? ''}`, () => {
  beforeAll(async () => {
    cluster = await startRedisCluster();
    endpoint = {
      clusterNodes: cluster.nodes.map((node) => {
        const [host, port] = node.split(':');
        return { host: host!, port: Number(port) };
      }),
    };
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  it('a consumer takes the wake-ups sent after each failover of the queue master, and none stays pending untaken', async () => {
    const queue = createTaskQueue({ redis: endpoint });
    const delivered = new Set<string>();
    const consumers = [1].map(() =>
      createTaskConsumer({
        redis: endpoint,
        concurrency: 2,
        handle: (job) => {
          delivered.add(job.taskId);
          return Promise.resolve();
        },
      }),
    );
    const missed: string[] = [];
    try {
      await Promise.all(consumers.map((consumer) => consumer.waitUntilReady()));
      for (let round = 0; round < 6; round++) {
        // Wake-ups in flight while the master dies: some may be lost, which is allowed.
        const during = Array.from({ length: 20 }, () => newTaskId());
        const sending = Promise.allSettled(during.map((id) => queue.wake(id, 'swept')));
        const { killed } = await cluster.killMasterOf('{mcp-tasks}');
        await sending;
        await cluster.revive(killed);
        // After the failover, a wake-up (the sweeper's) must reach a consumer.
        const after = Array.from({ length: 8 }, () => newTaskId());
        for (const id of after) {
          for (;;) {
            try {
              await queue.wake(id, 'swept');
              break;
            } catch {
              await new Promise((resolve) => setTimeout(resolve, 100));
            }
          }
        }
        const arrived = await eventually(() => after.every((id) => delivered.has(id)), 30_000);
        if (!arrived) missed.push(...after.filter((id) => !delivered.has(id)));
        // A wake-up of the failover itself is delivered or gone, never pending with no taker.
        const settled = await eventually(
          async () =>
            (await queue.pendingJobs(during.filter((id) => !delivered.has(id)))).size === 0,
          30_000,
        );
        const stuck = settled ? [] : [...(await queue.pendingJobs(during))];
        expect({ round, stuck }).toEqual({ round, stuck: [] });
        expect({ round, missed }).toEqual({ round, missed: [] });
        // And no job the sweeper would trust stays pending.
        expect(await queue.pendingJobs(after)).toEqual(new Set());
      }
    } finally {
      await Promise.all(consumers.map((consumer) => consumer.close()));
      await queue.close();
    }
  }, 240_000);
});
