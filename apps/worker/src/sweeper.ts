import {
  databaseNow,
  deleteExpiredTasks,
  expireTasks,
  tryAcquireLeadership,
  type Db,
  type TaskService,
} from '@mcp-tasks/store';
import type { Logger } from './logger.js';
import type { WorkerMetrics } from './metrics.js';

export const SWEEPER_LOCK_NAME = 'mcp-tasks-sweeper';

export interface Sweeper {
  start(): void;
  /** Stops scheduling and waits for a sweep in progress. */
  stop(): Promise<void>;
}

/**
 * One sweep at a time across all workers, elected per tick with a Postgres advisory lock that is
 * held only while sweeping: a frozen leader (SIGSTOP, a long GC pause) can then block sweeping for
 * at most one sweep, not until it dies. Each sweep re-dispatches orphans (never enqueued, lease
 * expired, wake-up lost with Redis), fails expired tasks, and deletes those past retention.
 */
export function createSweeper(options: {
  connectionString: string;
  db: Db;
  taskService: TaskService;
  intervalMs: number;
  retentionMs: number;
  logger: Logger;
  metrics: WorkerMetrics;
}): Sweeper {
  const { db, logger, metrics } = options;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const sweepOnce = async (): Promise<void> => {
    const leadership = await tryAcquireLeadership(options.connectionString, SWEEPER_LOCK_NAME);
    if (leadership === null) {
      metrics.sweeps.inc({ role: 'follower' });
      return;
    }
    try {
      // The database clock: leases and expiry are written with Postgres now(), not this host's.
      const now = await databaseNow(db);
      const redispatched = await options.taskService.redispatchOrphans(now);
      const expired = await expireTasks(db, now);
      const deleted = await deleteExpiredTasks(db, now, options.retentionMs);
      metrics.sweeps.inc({ role: 'leader' });
      metrics.redispatched.inc(redispatched);
      if (redispatched + expired.length + deleted > 0) {
        logger.info({ redispatched, expired: expired.length, deleted }, 'sweep');
      }
    } finally {
      await leadership.release();
    }
  };

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweepOnce()
        .catch((error: unknown) => {
          metrics.sweeps.inc({ role: 'error' });
          logger.warn({ err: error }, 'sweep failed');
        })
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, options.intervalMs);
  };

  return {
    start: schedule,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}
