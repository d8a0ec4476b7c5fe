import { defineTool, ErrorCode, ProtocolError } from '@mcp-tasks/tool-sdk';
import { NoArgsSchema, type NoArgs } from './no-args.js';

export const PROTOCOL_ERROR_JOB_ERROR = {
  code: ErrorCode.InternalError,
  message: 'protocol_error_job raised a JSON-RPC error on purpose',
} as const;

/** Conformance fixture: a task that raises a JSON-RPC error, so it ends failed with that error. */
export const protocolErrorJob = defineTool<NoArgs>({
  name: 'protocol_error_job',
  description: 'A task that always ends failed with a JSON-RPC error.',
  inputSchema: { type: 'object', properties: {} },
  arguments: NoArgsSchema,
  mode: 'task',
  task: {
    initialStatusMessage: 'Running a job that will raise a protocol error',
    start: () => ({}),
    step: () =>
      Promise.reject(
        new ProtocolError(PROTOCOL_ERROR_JOB_ERROR.code, PROTOCOL_ERROR_JOB_ERROR.message),
      ),
  },
});
