import type { JsonValue } from '@mcp-tasks/tool-sdk';
import { defineTool, ErrorCode, ProtocolError, sleep, textResult } from '@mcp-tasks/tool-sdk';
import { z } from 'zod';

/** The longest sleep one step takes, so a checkpoint (and a cancel check) happens at least this often. */
export const SLOW_COMPUTE_SLICE_MS = 1_000;
const MAX_SECONDS = 3_600;
/** The longest wait served synchronously (without the tasks extension). */
export const MAX_SYNC_SECONDS = 60;

const SlowComputeArgsSchema = z.object({
  seconds: z.number().min(0).max(MAX_SECONDS),
  label: z.string().optional(),
});
type SlowComputeArgs = z.infer<typeof SlowComputeArgsSchema>;

const SlowComputeStateSchema = z.object({ elapsedMs: z.number().int().min(0) });

function resultFor(args: SlowComputeArgs) {
  const label = args.label ?? 'computation';
  return textResult(`Computed ${label} in ${args.seconds} s`);
}

/**
 * Conformance fixture: sleeps `seconds`. As a task it sleeps in slices of at most one second, each
 * one a step, so it checkpoints its progress and notices a cancel within a slice.
 */
export const slowCompute = defineTool<SlowComputeArgs>({
  name: 'slow_compute',
  description: 'Sleeps for `seconds` (a task when seconds >= 1), then reports that it is done.',
  inputSchema: {
    type: 'object',
    properties: {
      seconds: { type: 'number', minimum: 0, maximum: MAX_SECONDS },
      label: { type: 'string' },
    },
    required: ['seconds'],
  },
  arguments: SlowComputeArgsSchema,
  mode: 'task-optional',
  prefersTask: (args) => args.seconds >= 1,
  async runSync(args, call) {
    // A client without the tasks extension gets the wait in the request. It is capped so such
    // calls cannot pin requests for an hour, and it stops when the request is aborted (client
    // gone, or the gateway's request timeout) instead of sleeping on unseen.
    if (args.seconds > MAX_SYNC_SECONDS) {
      throw new ProtocolError(
        ErrorCode.InvalidParams,
        `slow_compute runs at most ${MAX_SYNC_SECONDS} s without a task; declare the tasks extension for longer`,
      );
    }
    await sleep(args.seconds * 1_000, call.signal ?? new AbortController().signal);
    return resultFor(args);
  },
  task: {
    initialStatusMessage: 'Computing',
    start: () => ({ elapsedMs: 0 }),
    async step(raw: JsonValue, args, ctx) {
      const parsed = SlowComputeStateSchema.safeParse(raw);
      if (!parsed.success)
        throw new Error(`unreadable slow_compute checkpoint: ${parsed.error.message}`);
      const totalMs = Math.round(args.seconds * 1_000);
      const sliceMs = Math.min(SLOW_COMPUTE_SLICE_MS, totalMs - parsed.data.elapsedMs);
      await sleep(sliceMs, ctx.signal);
      const elapsedMs = parsed.data.elapsedMs + Math.max(0, sliceMs);
      if (elapsedMs >= totalMs) return { kind: 'complete', result: resultFor(args) };
      return {
        kind: 'continue',
        state: { elapsedMs },
        statusMessage: `Computing: ${Math.floor(elapsedMs / 1_000)} of ${args.seconds} s`,
      };
    },
  },
});
