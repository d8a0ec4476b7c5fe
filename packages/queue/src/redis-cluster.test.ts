import { newTaskId } from '@mcp-tasks/tasks';
import {
  redisClusterUnavailableReason,
  startRedisCluster,
  type RedisCluster,
} from '@mcp-tasks/testing';
import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  consumerHeartbeatKey,
  createConsumerHeartbeatReader,
  startConsumerHeartbeat,
} from './consumer-heartbeat.js';
import { asBullConnection, probeRedis } from './redis-connection.js';
import { createTaskConsumer } from './task-consumer.js';
import { createTaskQueue, latestJobKey } from './task-queue.js';
import { createTenantTokenBucket, tenantBucketKey } from './tenant-token-bucket.js';
import { TASK_QUEUE_NAME, type WakeUpJob } from './wake-up-job.js';

/**
 * Every Redis use of this package on a real Redis Cluster (3 masters, 3 replicas, started here):
 * BullMQ's multi-key scripts, the heartbeat's and the rate bucket's Lua, the pointer keys.
 */
const unavailable = redisClusterUnavailableReason();
if (unavailable !== null && process.env.CI)
  throw new Error(`Redis Cluster tests cannot run in CI: ${unavailable}`);

let cluster: RedisCluster;
let endpoint: { clusterNodes: { host: string; port: number }[] };
let admin: Cluster;

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.skipIf(unavailable !== null)(`on a Redis Cluster ${unavailable ?? ''}`, () => {
  beforeAll(async () => {
    cluster = await startRedisCluster();
    endpoint = {
      clusterNodes: cluster.nodes.map((node) => {
        const [host, port] = node.split(':');
        return { host: host!, port: Number(port) };
      }),
    };
    admin = new Cluster(endpoint.clusterNodes.map((node) => ({ ...node })));
  }, 60_000);

  afterAll(async () => {
    admin?.disconnect();
    await cluster?.stop();
  });

  it('refuses BullMQ with an untagged prefix (CROSSSLOT): why the prefix is tagged', async () => {
    const raw = new Queue(TASK_QUEUE_NAME, {
      connection: asBullConnection(new Cluster(endpoint.clusterNodes.map((node) => ({ ...node })))),
      prefix: 'untagged',
    });
    try {
      await expect(raw.add('run-task', { taskId: newTaskId(), reason: 'created' })).rejects.toThrow(
        /CROSSSLOT Keys in request don't hash to the same slot/,
      );
    } finally {
      await raw.close();
      await raw.disconnect();
    }
  });

  it('delivers wake-ups under the default prefix, hash-tagged as {mcp-tasks}', async () => {
    const queue = createTaskQueue({ redis: endpoint });
    const delivered: WakeUpJob[] = [];
    const consumer = createTaskConsumer({
      redis: endpoint,
      concurrency: 2,
      handle: (job) => {
        delivered.push(job);
        return Promise.resolve();
      },
    });
    try {
      await consumer.waitUntilReady();
      const created = [newTaskId(), newTaskId()];
      const resumed = newTaskId();
      await queue.wake(created[0]!, 'created');
      await queue.wakeBatch([created[1]!], 'created');
      await queue.wakeMany([resumed, newTaskId()], 'swept');
      await eventually(() => delivered.length === 4);
      expect(
        delivered
          .map((job) => job.taskId)
          .slice(0, 2)
          .sort(),
      ).toEqual([...created].sort());
      // The consumer took the swept job, so it deleted the job's pointer on the tag's slot.
      const pointerKey = latestJobKey('{mcp-tasks}', resumed);
      await eventually(async () => (await admin.get(pointerKey)) === null);
      await queue.wake(resumed, 'retry', { delayMs: 60_000 });
      // A pending later wake-up keeps its pointer, written under the hash-tagged prefix.
      expect(await admin.get(pointerKey)).toMatch(new RegExp(`^${resumed}\\.retry\\.`));
      expect(await queue.hasPendingJob(resumed)).toBe(true);
      expect(await queue.pendingJobs([resumed, created[0]!])).toEqual(new Set([resumed]));
      await queue.ping();
    } finally {
      await consumer.close();
      await queue.close();
    }
    // Every key of the queue lives on one master: the one serving the tag's slot.
    const holders = [];
    for (const master of admin.nodes('master')) {
      const keys = await master.keys('{mcp-tasks}:*');
      if (keys.length > 0) holders.push(keys);
    }
    expect(holders).toHaveLength(1);
    expect(holders[0]).toContain(`{mcp-tasks}:${TASK_QUEUE_NAME}:meta`);
    expect(holders[0]).toContain(`{mcp-tasks}:${TASK_QUEUE_NAME}:delayed`);
  });

  it('hash-tags a REDIS_PREFIX given without a tag, and keeps one given with a tag', async () => {
    for (const [prefix, tagged] of [
      ['acme', '{acme}'],
      ['prod:{acme}', 'prod:{acme}'],
    ] as const) {
      const queue = createTaskQueue({ redis: endpoint, prefix });
      try {
        await queue.wake(newTaskId(), 'created');
        expect(await admin.exists(`${tagged}:${TASK_QUEUE_NAME}:wait`)).toBe(1);
      } finally {
        await queue.close();
      }
    }
  });

  it('beats and reads the consumer heartbeat in the prefix slot', async () => {
    const heartbeat = startConsumerHeartbeat({ redis: endpoint, consumerId: 'w-cluster' });
    const reader = createConsumerHeartbeatReader({ redis: endpoint });
    try {
      await eventually(async () => (await reader.read(30_000)).consumers === 1);
      expect(await admin.zscore(consumerHeartbeatKey('{mcp-tasks}'), 'w-cluster')).not.toBeNull();
    } finally {
      heartbeat.stop();
      reader.close();
    }
  });

  it("shares one tenant's create-rate bucket between two gateways' connections", async () => {
    const a = createTenantTokenBucket({ redis: endpoint, commandTimeoutMs: 2_000 });
    const b = createTenantTokenBucket({ redis: endpoint, commandTimeoutMs: 2_000 });
    try {
      const limit = { ratePerS: 1, burst: 5 };
      const first = await a.take('tenant-x', limit, 3);
      const second = await b.take('tenant-x', limit, 3);
      expect(first).toEqual({ granted: 3, retryAfterMs: 0 });
      expect(second.granted).toBe(2);
      expect(await admin.exists(tenantBucketKey('{mcp-tasks}', 'tenant-x'))).toBe(1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('probes the cluster, and names the failure when no node answers', async () => {
    await expect(probeRedis(endpoint)).resolves.toBeUndefined();
    await expect(
      probeRedis({ clusterNodes: [{ host: '127.0.0.1', port: 1 }] }, 1_000),
    ).rejects.toThrow(/Failed to refresh slots cache/);
  });
});
