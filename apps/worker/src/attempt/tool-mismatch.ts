import { ErrorCode } from '@mcp-tasks/protocol';
import { failTask, recordToolMissing, releaseLease, type Db, type Fence } from '@mcp-tasks/store';
import type { Task } from '@mcp-tasks/tasks';
import type { Logger } from '../logger.js';
import type { JobOutcome, WorkerMetrics } from '../metrics.js';
import { wakeAgainOrLeaveToSweeper, type WakeAgain } from './wake-again.js';

/** Why this worker cannot run a task's tool. */
export type ToolMismatch =
  | { reason: 'missing' }
  /** The checkpoint was written by a newer version of the tool than this worker has. */
  | { reason: 'older_version'; have: number; need: number };

/** Default bound on leaving a task for other workers before failing it. */
export const DEFAULT_TOOL_MISSING_FAIL_AFTER_MS = 5 * 60_000;

export interface ToolMismatchOptions {
  db: Db;
  workerId: string;
  wakeAgain: WakeAgain;
  logger: Logger;
  metrics: WorkerMetrics;
  /** How long after the first worker found the tool missing the task is failed instead. */
  failAfterMs: number;
  /** Delay of the wake-up that leaves the task for another worker. */
  retryDelayMs: number;
}

function describe(toolName: string, mismatch: ToolMismatch): string {
  return mismatch.reason === 'missing'
    ? `tool "${toolName}" is not in its catalogue`
    : `its tool "${toolName}" is version ${mismatch.have}, but the checkpoint needs version ${mismatch.need} or newer`;
}

/**
 * A worker whose catalogue differs from the gateway's (other MCP_TOOL_MODULES, an older release in
 * a rolling deploy) does not run the task, and does not spend its retry budget: it gives the task
 * back for a worker that has the tool. Once the first such refusal is older than the bound, the
 * task fails with an error that names the tool, so a catalogue nobody has cannot park it forever.
 */
export function createToolMismatchHandler(options: ToolMismatchOptions) {
  const { db, logger, metrics } = options;
  return async function leaveForAnotherWorker(
    fence: Fence,
    task: Task,
    mismatch: ToolMismatch,
  ): Promise<JobOutcome> {
    const toolName = task.operation.toolName;
    metrics.toolMismatches.inc({ tool: toolName, reason: mismatch.reason });
    const { missingForMs } = await recordToolMissing(db, fence);
    const why = describe(toolName, mismatch);
    if (missingForMs >= options.failAfterMs) {
      const message =
        mismatch.reason === 'missing'
          ? `No worker ran tool "${toolName}" within ${options.failAfterMs} ms (worker ${options.workerId} does not have it): check MCP_TOOL_PACKS and MCP_TOOL_MODULES on the workers`
          : `No worker ran version ${mismatch.need} of tool "${toolName}" within ${options.failAfterMs} ms (worker ${options.workerId} has version ${mismatch.have}): finish rolling out the newer tool`;
      logger.error({ taskId: task.id, tool: toolName, missingForMs, ...mismatch }, message);
      await failTask(db, fence, { code: ErrorCode.InternalError, message }, `Failed: ${message}`);
      return 'failed';
    }
    logger.warn(
      { taskId: task.id, tool: toolName, missingForMs, ...mismatch },
      `tool catalogue mismatch: ${why}; leaving the task for another worker`,
    );
    await releaseLease(db, fence);
    await wakeAgainOrLeaveToSweeper(options.wakeAgain, logger, {
      taskId: task.id,
      reason: 'released',
      delayMs: options.retryDelayMs,
      what: 'requeue',
    });
    return 'tool_unavailable';
  };
}
