import type { WakeUpJob } from '@mcp-tasks/queue';
import { isTransientInfrastructureError } from '@mcp-tasks/store';
import type { Logger } from '../logger.js';
import type { WorkerMetrics } from '../metrics.js';
import { wakeAgainOrLeaveToSweeper, type WakeAgain } from './wake-again.js';
import type { TaskRunner } from './task-runner.js';

/**
 * One BullMQ delivery. The task's fate is settled in Postgres by the runner; what reaches here is
 * infrastructure trouble. A transient outage sends the wake-up again after a lease period (by then
 * any lease this attempt held has expired); anything else is logged and the job dropped, since
 * Postgres still says `working` and the sweeper wakes it again.
 */
export function createJobHandler(options: {
  runner: TaskRunner;
  wakeAgain: WakeAgain;
  leaseMs: number;
  logger: Logger;
  metrics: WorkerMetrics;
}): (job: WakeUpJob) => Promise<void> {
  const { runner, wakeAgain, logger, metrics } = options;
  return async (job) => {
    // The attempt may hold another task than the wake-up named (claimFairly): both need one.
    let claimedTaskId: string | undefined;
    try {
      const outcome = await runner.run(job.taskId, (taskId) => {
        claimedTaskId = taskId;
      });
      metrics.jobs.inc({ outcome });
    } catch (error) {
      metrics.jobs.inc({ outcome: 'error' });
      const taskId = claimedTaskId ?? job.taskId;
      if (!isTransientInfrastructureError(error)) {
        logger.error({ err: error, taskId }, 'wake-up failed; the sweeper will re-dispatch');
        return;
      }
      logger.warn({ err: error, taskId }, 'infrastructure unavailable; retrying the wake-up');
      const taskIds = new Set([job.taskId, taskId]);
      for (const retried of taskIds) {
        await wakeAgainOrLeaveToSweeper(wakeAgain, logger, {
          taskId: retried,
          reason: 'retry',
          delayMs: options.leaseMs,
          what: 'requeue',
        });
      }
    }
  };
}
