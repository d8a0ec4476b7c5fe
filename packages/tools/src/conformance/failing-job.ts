import { NoArgsSchema, type NoArgs } from './no-args.js';
import { defineTool, textResult } from '@mcp-tasks/tool-sdk';

/** Conformance fixture: a task whose tool reports an error, so it ends completed with isError (R19). */
export const failingJob = defineTool<NoArgs>({
  name: 'failing_job',
  description: 'A task that always ends with a tool error (completed, isError: true).',
  inputSchema: { type: 'object', properties: {} },
  arguments: NoArgsSchema,
  mode: 'task',
  task: {
    initialStatusMessage: 'Running a job that will fail',
    start: () => ({}),
    step: () =>
      Promise.resolve({
        kind: 'complete',
        result: textResult('Tool execution failed: failing_job always fails', { isError: true }),
      }),
  },
});
