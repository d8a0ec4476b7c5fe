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
