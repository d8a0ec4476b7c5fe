import { withDeadline } from './deadline.js';
import { DEFAULT_QUEUE_PREFIX, TASK_QUEUE_NAME } from './wake-up-job.js';
import { createProducerConnection, whenReady, type RedisClient } from './redis-connection.js';
import { effectivePrefix, type RedisEndpoint } from './redis-endpoint.js';

/**
 * Who consumes a prefix's queue, so a gateway can say when nobody does (a worker on another
 * REDIS_PREFIX or another Redis database looks exactly like a slow queue otherwise).
 *
 * A sorted set under the prefix, one member per worker, scored with Redis's own clock (TIME)
 * when that worker last beat: no clock skew between hosts, and "last seen 3 min ago" survives a
 * worker's exit. Not BullMQ's Queue.getWorkers(): it parses CLIENT LIST for the names BullMQ sets
 * with CLIENT SETNAME, and managed Redis often forbids those (CLIENT is @admin/@dangerous in ACLs;
 * Memorystore had no SETNAME, where BullMQ answers a placeholder entry); it also counts open
 * connections, not consumers of this prefix.
 */
export const CONSUMER_HEARTBEAT_INTERVAL_MS = 5_000;
/** Members older than this are pruned; the key expires this long after the last beat. */
const RETENTION_MS = 24 * 60 * 60 * 1_000;

export function consumerHeartbeatKey(prefix: string = DEFAULT_QUEUE_PREFIX): string {
  return `${prefix}:${TASK_QUEUE_NAME}:mcp-consumers`;
}

const NOW_MS = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

const BEAT_SCRIPT = `${NOW_MS}
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return now`;

/** Returns { consumers beating within ARGV[1] ms, ms since the latest beat or -1 }. */
const READ_SCRIPT = `${NOW_MS}
local latest = redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local count = redis.call('ZCOUNT', KEYS[1], now - tonumber(ARGV[1]), '+inf')
if latest[2] == nil then return {count, -1} end
return {count, now - tonumber(latest[2])}`;

export interface ConsumerHeartbeat {
  /**
   * Stops beating. The last beat stays (gateways count this worker until their window passes,
   * and can still say when a worker was last seen).
   */
  stop(): void;
}

export interface ConsumerHeartbeatOptions {
  redis: RedisEndpoint;
  prefix?: string;
  /** Unique per worker process (WORKER_ID). */
  consumerId: string;
  intervalMs?: number;
  /** A beat that failed (Redis down); the next one retries. */
  onError?(error: unknown): void;
}

/** The worker side: beats now and every intervalMs while the worker consumes the queue. */
export function startConsumerHeartbeat(options: ConsumerHeartbeatOptions): ConsumerHeartbeat {
  const key = consumerHeartbeatKey(effectivePrefix(options.redis, options.prefix));
  const intervalMs = options.intervalMs ?? CONSUMER_HEARTBEAT_INTERVAL_MS;
  const connection = createProducerConnection(options.redis, 2_000);
  connection.on('error', () => undefined);
  const beat = (): void => {
    connection
      .eval(BEAT_SCRIPT, 1, key, options.consumerId, RETENTION_MS)
      .catch((error: unknown) => options.onError?.(error));
  };
  // The producer connection refuses commands until connected, so the first beat waits for it.
  connection.once('ready', beat);
  const timer = setInterval(beat, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      connection.disconnect();
    },
  };
}

export interface ConsumerSighting {
  /** Consumers that beat within the window asked for. */
  consumers: number;
  /** Since the latest beat of any consumer (kept 24 h); undefined when none is recorded. */
  lastSeenMsAgo: number | undefined;
}

export interface ConsumerHeartbeatReader {
  read(windowMs: number): Promise<ConsumerSighting>;
  close(): void;
}

/** The gateway side: who has consumed the prefix's queue lately, by Redis's clock. */
export function createConsumerHeartbeatReader(options: {
  redis: RedisEndpoint;
  prefix?: string;
  commandTimeoutMs?: number;
}): ConsumerHeartbeatReader {
  const key = consumerHeartbeatKey(effectivePrefix(options.redis, options.prefix));
  const timeoutMs = options.commandTimeoutMs ?? 2_000;
  const connection: RedisClient = createProducerConnection(options.redis, timeoutMs);
  connection.on('error', () => undefined);
  return {
    async read(windowMs) {
      const [consumers, lastSeen] = (await withDeadline(
        whenReady(connection).then(() => connection.eval(READ_SCRIPT, 1, key, windowMs)),
        timeoutMs,
        `consumer heartbeat read timed out after ${timeoutMs} ms`,
      )) as [number, number];
      return { consumers, lastSeenMsAgo: lastSeen < 0 ? undefined : lastSeen };
    },
    close() {
      connection.disconnect();
    },
  };
}
