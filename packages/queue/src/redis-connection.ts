import type { ConnectionOptions } from 'bullmq';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { isClusterEndpoint, type RedisEndpoint } from './redis-endpoint.js';

/** A connection to one node or to a cluster; both speak every command this package sends. */
export type RedisClient = Redis | Cluster;

interface ConnectOptions extends RedisOptions {
  /** On a cluster: give up on the whole cluster when no node answers (probe); default retry. */
  clusterRetryStrategy?: (times: number) => number | null;
}

function connect(endpoint: RedisEndpoint, options: ConnectOptions): RedisClient {
  const { clusterRetryStrategy, enableOfflineQueue, lazyConnect, ...nodeOptions } = options;
  if (!isClusterEndpoint(endpoint)) return new Redis(endpoint.url, options);
  return new Cluster(
    endpoint.clusterNodes.map((node) => ({ host: node.host, port: node.port })),
    {
      redisOptions: nodeOptions,
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      ...(lazyConnect === undefined ? {} : { lazyConnect }),
      ...(clusterRetryStrategy === undefined ? {} : { clusterRetryStrategy }),
      // A failover moves a slot to the promoted replica within cluster-node-timeout; a command
      // sent meanwhile is retried once the slot map is refreshed rather than failed at once.
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 200,
    },
  );
}

/**
 * Producer connections fail fast: with Redis down, a wake-up must error quickly (the task is
 * already durable and the sweeper wakes it again), not sit in ioredis' offline queue.
 */
export function createProducerConnection(
  endpoint: RedisEndpoint,
  commandTimeoutMs: number,
): RedisClient {
  return connect(endpoint, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs,
    connectionName: 'mcp-tasks producer',
  });
}

/** Consumer connections wait for Redis forever: BullMQ workers require maxRetriesPerRequest null. */
export function createConsumerConnection(endpoint: RedisEndpoint): RedisClient {
  return connect(endpoint, { maxRetriesPerRequest: null, connectionName: 'mcp-tasks consumer' });
}

/**
 * Resolves once the connection takes commands. Producer connections keep no offline queue, so a
 * command sent while one connects fails at once ("Stream isn't writeable" on one node, "Cluster
 * isn't ready" on a cluster); callers wait for this first, within their own bound.
 */
export function whenReady(connection: RedisClient): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  // One listener per connection attempt, however many callers wait (no listener leak in an outage).
  let ready = pendingReady.get(connection);
  if (ready === undefined) {
    ready = new Promise<void>((resolve) =>
      connection.once('ready', () => {
        pendingReady.delete(connection);
        resolve();
      }),
    );
    pendingReady.set(connection, ready);
  }
  return ready;
}
const pendingReady = new WeakMap<RedisClient, Promise<void>>();

/**
 * BullMQ pins its own ioredis patch release, so its `Redis` type differs from ours in private
 * members only; at runtime it accepts any ioredis instance, a Cluster too (it checks the shape,
 * then duplicates it).
 */
export function asBullConnection(redis: RedisClient): ConnectionOptions {
  return redis as unknown as ConnectionOptions;
}

/**
 * Connects once, without retrying, and pings: rejects with the connection's own error (e.g.
 * ECONNREFUSED) so a process can say at start that REDIS_URL (or REDIS_CLUSTER_NODES) points
 * nowhere. On a cluster it also asks CLUSTER INFO: a cluster that does not serve every slot
 * would fail some keys and not others.
 */
export async function probeRedis(endpoint: RedisEndpoint, timeoutMs = 3_000): Promise<void> {
  const probe = connect(endpoint, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    clusterRetryStrategy: () => null,
    connectTimeout: timeoutMs,
    connectionName: 'mcp-tasks probe',
  });
  // connect() rejects with "Connection is closed"; the cause (ECONNREFUSED…) is the error event.
  let cause: unknown;
  probe.on('error', (error: unknown) => (cause ??= error));
  try {
    await probe.connect();
    await probe.ping();
    if (isClusterEndpoint(endpoint)) {
      const info = String(await probe.call('CLUSTER', 'INFO'));
      if (!info.includes('cluster_state:ok'))
        throw new Error(
          'the cluster answers but reports cluster_state:fail (not every slot is served)',
        );
    }
  } catch (error) {
    throw cause ?? error;
  } finally {
    probe.disconnect();
  }
}
