import type { Logger } from './logger.js';
import { describeRedisEndpoint, isClusterEndpoint, type RedisEndpoint } from '@mcp-tasks/queue';
import { describeConnectionFailure } from '@mcp-tasks/store';

/** While Redis stays unreachable, how often the worker repeats that it is. */
export const REDIS_REMINDER_MS = 30_000;

/**
 * The queue consumer's error handler. ioredis retries a refused connection several times a
 * second and every attempt is an error event: say once, in one line, that REDIS_URL points
 * nowhere, then remind at most every `reminderMs` with how many attempts failed in between.
 */
export function createRedisErrorReporter(options: {
  redis: RedisEndpoint;
  logger: Pick<Logger, 'warn' | 'error'>;
  reminderMs?: number;
  now?: () => number;
}): (error: unknown) => void {
  const reminderMs = options.reminderMs ?? REDIS_REMINDER_MS;
  const now = options.now ?? Date.now;
  let lastReportAt: number | undefined;
  let failedSinceReport = 0;
  return (error) => {
    const described = describeRedisFailure(options.redis, error);
    if (described === undefined) {
      options.logger.warn({ err: error }, 'queue consumer error');
      return;
    }
    const at = now();
    if (lastReportAt !== undefined && at - lastReportAt < reminderMs) {
      failedSinceReport += 1;
      return;
    }
    const details =
      lastReportAt === undefined ? {} : { failedAttemptsSinceLastReport: failedSinceReport };
    options.logger.error(
      details,
      `${described} The worker keeps retrying and takes no tasks until then.`,
    );
    lastReportAt = at;
    failedSinceReport = 0;
  };
}

/**
 * One node: the URL's own diagnosis (refused, unknown host). A cluster: ioredis says "Failed to
 * refresh slots cache" once no seed node answers, which names no address; say which ones.
 */
function describeRedisFailure(redis: RedisEndpoint, error: unknown): string | undefined {
  if (!isClusterEndpoint(redis)) return describeConnectionFailure('REDIS_URL', redis.url, error);
  const message = (error as Error | null)?.message ?? '';
  if (!message.includes('Failed to refresh slots cache')) return undefined;
  return `${describeRedisEndpoint(redis)}: no node of the cluster answered. Start the cluster, or set REDIS_CLUSTER_NODES to nodes of a running one.`;
}
