import type { TaskDispatcher } from '@mcp-tasks/store';
import type { TaskQueue } from '@mcp-tasks/queue';

/**
 * The sweeper's view of the queue: a task that still has a wake-up waiting (a backlog, a delayed
 * retry) needs no second one. Without this check a long backlog would gain a duplicate per task
 * on every sweep. A delivery that is active but whose task Postgres calls orphaned belongs to a
 * dead or finishing worker, so it does not count (hasPendingJob ignores active jobs).
 */
export function createSweepDispatcher(queue: TaskQueue): TaskDispatcher {
  return {
    async enqueue(taskId, reason, options) {
      if (reason === 'swept' && (await queue.hasPendingJob(taskId))) return;
      await queue.enqueue(taskId, reason, options);
    },
    async enqueueSwept(taskIds) {
      const pending = await queue.pendingJobs(taskIds);
      const toWake = taskIds.filter((taskId) => !pending.has(taskId));
      await queue.enqueueMany(toWake, 'swept');
      return toWake.length;
    },
  };
}
