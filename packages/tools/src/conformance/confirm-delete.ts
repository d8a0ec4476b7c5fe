import { z } from 'zod';
import {
  acceptedField,
  defineTool,
  elicitForm,
  readElicitResult,
  textResult,
} from '@mcp-tasks/tool-sdk';

export const CONFIRM_DELETE_KEY = 'confirm_delete';

const ConfirmDeleteArgsSchema = z.object({ filename: z.string() });
type ConfirmDeleteArgs = z.infer<typeof ConfirmDeleteArgsSchema>;

const ConfirmStateSchema = z.object({ asked: z.boolean() });

/**
 * Conformance fixture: parks on one elicitation asking {confirm: boolean}. Accept + confirm
 * "deletes" (nothing real is touched); anything else keeps the file, and a decline or cancel of
 * the question cancels the task.
 */
export const confirmDelete = defineTool<ConfirmDeleteArgs>({
  name: 'confirm_delete',
  description: 'Asks for confirmation before (pretending to) delete a file; runs as a task.',
  inputSchema: {
    type: 'object',
    properties: { filename: { type: 'string' } },
    required: ['filename'],
  },
  arguments: ConfirmDeleteArgsSchema,
  mode: 'task',
  task: {
    initialStatusMessage: 'Preparing to delete',
    start: () => ({ asked: false }),
    step(raw, args, ctx) {
      const parsed = ConfirmStateSchema.safeParse(raw);
      if (!parsed.success)
        throw new Error(`unreadable confirm_delete checkpoint: ${parsed.error.message}`);
      if (!parsed.data.asked) {
        return Promise.resolve({
          kind: 'input',
          state: { asked: true },
          inputRequests: {
            [CONFIRM_DELETE_KEY]: elicitForm(`Delete ${args.filename}?`, {
              type: 'object',
              properties: { confirm: { type: 'boolean' } },
              required: ['confirm'],
            }),
          },
          statusMessage: `Waiting for confirmation to delete ${args.filename}`,
        });
      }
      const answer = readElicitResult(ctx.inputResponses, CONFIRM_DELETE_KEY);
      if (answer !== undefined && answer.action !== 'accept') {
        return Promise.resolve({
          kind: 'cancel',
          statusMessage: `Deletion of ${args.filename} was ${answer.action}d`,
        });
      }
      const confirmed = acceptedField(answer, 'confirm', 'boolean') === true;
      return Promise.resolve({
        kind: 'complete',
        result: textResult(confirmed ? `Deleted ${args.filename}` : `Kept ${args.filename}`, {
          structuredContent: { filename: args.filename, deleted: confirmed },
        }),
      });
    },
  },
});
