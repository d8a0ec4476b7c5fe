import type { JsonObject, JsonValue } from '@mcp-tasks/tasks';
import type { ToolDefinition } from './tool.js';

/** The version of a tool that declares none, and of a checkpoint recorded before versions were. */
export const DEFAULT_TOOL_VERSION = 1;

export function toolVersion(tool: Pick<ToolDefinition, 'version'>): number {
  return tool.version ?? DEFAULT_TOOL_VERSION;
}

/** What a worker may do with a saved checkpoint, given the version that wrote it. */
export type CheckpointResolution =
  /** Written by this version: step on from it. */
  | { kind: 'current'; state: JsonValue }
  /** Written by an older version and upgraded by the tool's hook: save it, then step on. */
  | { kind: 'migrated'; state: JsonValue; fromVersion: number }
  /** Written by a newer release than this worker runs: leave the task for a worker that has it. */
  | { kind: 'newer'; recordedVersion: number }
  /** Written by an older version this one cannot read: the task fails with this message. */
  | { kind: 'unreadable'; message: string };

/**
 * The one rule for reading a checkpoint across tool versions, used by the worker and by the test
 * harness alike, so a tool's migration tests exercise exactly what production does.
 */
export function resolveCheckpoint(
  tool: ToolDefinition,
  args: JsonObject,
  checkpoint: JsonValue,
  recordedVersion: number | null,
): CheckpointResolution {
  const current = toolVersion(tool);
  const recorded = recordedVersion ?? DEFAULT_TOOL_VERSION;
  if (recorded === current) return { kind: 'current', state: checkpoint };
  if (recorded > current) return { kind: 'newer', recordedVersion: recorded };
  const migrate = tool.task?.migrateCheckpoint;
  if (migrate === undefined) {
    return {
      kind: 'unreadable',
      message:
        `${tool.name}: the checkpoint was written by version ${recorded} and version ${current} ` +
        'cannot read it (the tool has no migrateCheckpoint hook)',
    };
  }
  try {
    return { kind: 'migrated', state: migrate(checkpoint, recorded, args), fromVersion: recorded };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      kind: 'unreadable',
      message: `${tool.name}: could not migrate the checkpoint from version ${recorded} to ${current}: ${reason}`,
    };
  }
}
