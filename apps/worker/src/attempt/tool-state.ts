import { ErrorCode } from '@mcp-tasks/protocol';
import {
  failTask,
  recordToolVersion,
  type Db,
  type Fence,
  type ToolRecord,
} from '@mcp-tasks/store';
import type { JsonObject, JsonValue, Task } from '@mcp-tasks/tasks';
import { resolveCheckpoint, toolVersion, type ToolDefinition } from '@mcp-tasks/tools';
import type { Logger } from '../logger.js';
import type { ToolMismatch } from './tool-mismatch.js';

/** The state the attempt steps from, or why it cannot run here. */
type StartingState =
  /** `version`: the tool's version, to record with every checkpoint the attempt saves. */
  | { kind: 'run'; state: JsonValue; version: number }
  | { kind: 'mismatch'; mismatch: ToolMismatch }
  | { kind: 'failed' };

/**
 * Reads the task's checkpoint across tool versions (the rule itself is resolveCheckpoint, shared
 * with the tool-sdk test harness): a fresh task starts (its version is recorded with its first
 * checkpoint, so it costs no write of its own; a task that ends without one needs none); a checkpoint of
 * this version is used as is; an older one goes through the tool's migrateCheckpoint hook (saved
 * at once with the new version) or fails the task clearly; a newer one is a catalogue mismatch.
 */
export async function startingState(
  db: Db,
  fence: Fence,
  task: Task,
  record: ToolRecord,
  tool: ToolDefinition & { task: NonNullable<ToolDefinition['task']> },
  args: JsonObject,
  logger: Logger,
): Promise<StartingState> {
  const version = toolVersion(tool);
  if (task.checkpoint === null) {
    // A "tool missing" mark must go at once: it would otherwise fail the task for want of a tool
    // this worker has, if the attempt ends without a checkpoint (rare: only after a mismatch).
    if (record.toolMissingSince !== null) await recordToolVersion(db, fence, version);
    return { kind: 'run', state: tool.task.start(args), version };
  }
  const resolution = resolveCheckpoint(tool, args, task.checkpoint, record.toolVersion);
  switch (resolution.kind) {
    case 'current':
      if (record.toolMissingSince !== null) await recordToolVersion(db, fence, version);
      return { kind: 'run', state: resolution.state, version };
    case 'migrated':
      await recordToolVersion(db, fence, version, resolution.state);
      logger.info(
        { taskId: task.id, tool: tool.name, from: resolution.fromVersion, to: version },
        'migrated the checkpoint to the current tool version',
      );
      return { kind: 'run', state: resolution.state, version };
    case 'newer':
      return {
        kind: 'mismatch',
        mismatch: { reason: 'older_version', have: version, need: resolution.recordedVersion },
      };
    case 'unreadable':
      logger.error({ taskId: task.id, tool: tool.name }, resolution.message);
      await failTask(
        db,
        fence,
        { code: ErrorCode.InternalError, message: resolution.message },
        `Failed: ${resolution.message}`,
      );
      return { kind: 'failed' };
  }
}
