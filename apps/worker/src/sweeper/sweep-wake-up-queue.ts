import type { WakeUpQueue } from '@mcp-tasks/store';
import type { TaskQueue } from '@mcp-tasks/queue';

/**
 * The sweeper's view of the queue: a task that still has a wake-up waiting (a backlog, a delayed
 * retry) needs no second one. Without this check a long backlog would gain a duplicate per task
 * on every sweep. A delivery that is active but whose task Postgres calls orphaned belongs to a
 * dead or finishing worker, so it does not count (hasPendingJob ignores active jobs).
 */
export function createSweepWakeUpQueue(queue: TaskQueue): WakeUpQueue {
  return {
    async wake(taskId, reason, options) {
      if (reason === 'swept' && (await queue.hasPendingJob(taskId))) return;
      await queue.wake(taskId, reason, options);
    },
    async wakeSwept(taskIds) {
      const pending = await queue.pendingJobs(taskIds);
      const toWake = taskIds.filter((taskId) => !pending.has(taskId));
      await queue.wakeMany(toWake, 'swept');
      return toWake.length;
    },
  };
}
