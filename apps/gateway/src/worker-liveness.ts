import type { ConsumerHeartbeatReader } from '@mcp-tasks/queue';
import type { Logger } from 'pino';

/**
 * Whether any worker consumes this gateway's queue. A gateway and workers on different
 * REDIS_PREFIX values (or Redis databases) both run without an error, and every task simply
 * waits; this turns that into one log line and a /readyz detail.
 *
 * It reports, and never fails readiness: a fresh cluster whose workers are still starting must
 * not take every gateway out of the load balancer (tasks are durable and wait for a worker).
 */
export type WorkerLivenessReport =
  | { status: 'consuming'; consumers: number; lastSeenMsAgo: number }
  | { status: 'none_recent'; windowMs: number; lastSeenMsAgo: number | null; hint: string }
  /** Redis did not answer (the redis check says so). */
  | { status: 'unknown' };

export interface WorkerLiveness {
  /** Asks Redis now (one round trip); logs a change of state. */
  check(): Promise<WorkerLivenessReport>;
  /** Checks every intervalMs until stop(). */
  start(): void;
  stop(): void;
}

export interface WorkerLivenessOptions {
  reader: ConsumerHeartbeatReader;
  /** The REDIS_PREFIX value in effect, and whether it is the default (unset). */
  prefix: string;
  prefixIsDefault: boolean;
  queueName: string;
  /** For the log line, password masked: `REDIS_URL (redis://…)` or `REDIS_CLUSTER_NODES (…)`. */
  redisSettingForLog: string;
  logger: Logger;
  /** A worker beats every 5 s; none within this counts as none at all. */
  windowMs?: number;
  intervalMs?: number;
  now?: () => number;
}

const HINT =
  "no worker has consumed this gateway's queue within the window: workers must run with the same REDIS_PREFIX and REDIS_URL (the gateway log names them)";

const seconds = (ms: number): string => `${Math.round(ms / 1000)} s`;

export function watchWorkerLiveness(options: WorkerLivenessOptions): WorkerLiveness {
  const { reader, logger } = options;
  const windowMs = options.windowMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 10_000;
  const now = options.now ?? Date.now;
  const startedAt = now();
  const prefixText = `REDIS_PREFIX=${options.prefix}${options.prefixIsDefault ? ' (the default)' : ''}`;
  /** What the log last said; nothing is logged until a state is known. */
  let logged: 'none' | 'consuming' | undefined;
  let silentSince = 0;
  let inFlight: Promise<WorkerLivenessReport> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const noteNone = (lastSeenMsAgo: number | undefined): void => {
    // A gateway that started moments ago has not watched for a window yet: its workers may be
    // starting alongside it.
    if (logged === 'none' || now() - startedAt < windowMs) return;
    logged = 'none';
    silentSince = lastSeenMsAgo === undefined ? startedAt : now() - lastSeenMsAgo;
    const howLong =
      lastSeenMsAgo === undefined
        ? `since this gateway started ${seconds(now() - startedAt)} ago (none recorded in the last 24 h)`
        : `for ${seconds(lastSeenMsAgo)}`;
    logger.warn(
      {
        redisPrefix: options.prefix,
        queue: options.queueName,
        lastSeenMsAgo: lastSeenMsAgo ?? null,
      },
      `no worker has consumed queue "${options.queueName}" under ${prefixText} ${howLong}; tasks wait until one does. Start a worker with the same REDIS_PREFIX (${options.prefix}) and ${options.redisSettingForLog} as this gateway`,
    );
  };

  const noteConsuming = (): void => {
    if (logged === 'none') {
      logger.info(
        { redisPrefix: options.prefix, queue: options.queueName },
        `a worker consumes queue "${options.queueName}" under ${prefixText} again, after ${seconds(now() - silentSince)} without one`,
      );
    }
    logged = 'consuming';
  };

  const ask = async (): Promise<WorkerLivenessReport> => {
    try {
      const { consumers, lastSeenMsAgo } = await reader.read(windowMs);
      if (consumers > 0) {
        noteConsuming();
        return { status: 'consuming', consumers, lastSeenMsAgo: lastSeenMsAgo ?? 0 };
      }
      noteNone(lastSeenMsAgo);
      return { status: 'none_recent', windowMs, lastSeenMsAgo: lastSeenMsAgo ?? null, hint: HINT };
    } catch (error) {
      logger.debug({ err: error }, 'worker liveness check failed');
      return { status: 'unknown' };
    }
  };

  const check = (): Promise<WorkerLivenessReport> => {
    // Probes and the timer may ask together; one read answers both, so transitions stay ordered.
    inFlight ??= ask().finally(() => (inFlight = undefined));
    return inFlight;
  };

  return {
    check,
    start() {
      timer ??= setInterval(() => void check(), intervalMs);
      timer.unref();
      void check();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
