import type { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * Producer connections fail fast: with Redis down, an enqueue must error quickly (the task is
 * already durable and the sweeper re-enqueues it), not sit in ioredis' offline queue.
 */
export function createProducerConnection(redisUrl: string, commandTimeoutMs: number): Redis {
  return new Redis(redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs,
    connectionName: 'mcp-tasks producer',
  });
}

/** Consumer connections wait for Redis forever: BullMQ workers require maxRetriesPerRequest null. */
export function createConsumerConnection(redisUrl: string): Redis {
  return new Redis(redisUrl, { maxRetriesPerRequest: null, connectionName: 'mcp-tasks consumer' });
}

/**
 * BullMQ pins its own ioredis patch release, so its `Redis` type differs from ours in private
 * members only; at runtime it accepts any ioredis instance (it checks the shape, then duplicates it).
 */
export function asBullConnection(redis: Redis): ConnectionOptions {
  return redis as unknown as ConnectionOptions;
}

/**
 * Connects once, without retrying, and pings: rejects with the connection's own error (e.g.
 * ECONNREFUSED) so a process can say at start that REDIS_URL points nowhere.
 */
export async function probeRedis(redisUrl: string, timeoutMs = 3_000): Promise<void> {
  const probe = new Redis(redisUrl, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: timeoutMs,
    connectionName: 'mcp-tasks probe',
  });
  // connect() rejects with "Connection is closed"; the cause (ECONNREFUSED…) is the error event.
  let cause: unknown;
  probe.on('error', (error) => (cause ??= error));
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    throw cause ?? error;
  } finally {
    probe.disconnect();
  }
}
