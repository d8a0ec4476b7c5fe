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
import type { Logger } from './logger.js';
import type { ToolMismatch } from './tool-mismatch.js';

/** The state the attempt steps from, or why it cannot run here. */
type StartingState =
  | { kind: 'run'; state: JsonValue }
  | { kind: 'mismatch'; mismatch: ToolMismatch }
  | { kind: 'failed' };

/**
 * Reads the task's checkpoint across tool versions (the rule itself is resolveCheckpoint, shared
 * with the tool-sdk test harness): a fresh task starts and records this version; a checkpoint of
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
    if (record.toolVersion !== version || record.toolMissingSince !== null)
      await recordToolVersion(db, fence, version);
    return { kind: 'run', state: tool.task.start(args) };
  }
  const resolution = resolveCheckpoint(tool, args, task.checkpoint, record.toolVersion);
  switch (resolution.kind) {
    case 'current':
      if (record.toolMissingSince !== null) await recordToolVersion(db, fence, version);
      return { kind: 'run', state: resolution.state };
    case 'migrated':
      await recordToolVersion(db, fence, version, resolution.state);
      logger.info(
        { taskId: task.id, tool: tool.name, from: resolution.fromVersion, to: version },
        'migrated the checkpoint to the current tool version',
      );
      return { kind: 'run', state: resolution.state };
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
