import {
  acceptedField,
  defineTool,
  elicitForm,
  ErrorCode,
  ProtocolError,
  readElicitResult,
  textResult,
  type StepOutcome,
} from '@mcp-tasks/tool-sdk';
import { z } from 'zod';

export const REALISTIC_TOOL = 'realistic_workflow';
/** Asked in the MRTR round before the task exists. */
export const LABEL_KEY = 'label';
/** Asked once the task runs: the pause the client answers with tasks/update. */
export const APPROVE_KEY = 'approve';
/** Checkpointed work steps; the input pause comes after the first. */
export const WORK_STEPS = 3;

const ArgsSchema = z.object({ label: z.string().optional() });
type Args = z.infer<typeof ArgsSchema>;
const StateSchema = z.object({ done: z.number().int().min(0), asked: z.boolean() });

/**
 * MRTR round (`label`) → task: step 1 → input pause (`approve`) → step 2 → step 3 → complete.
 * Each step is a checkpoint; the answer resumes the task through a new wake-up.
 */
export const realisticWorkflow = defineTool<Args>({
  name: REALISTIC_TOOL,
  description: 'Bench workload: one input round before the task, one pause in it, three steps.',
  inputSchema: { type: 'object', properties: {} },
  arguments: ArgsSchema,
  mode: 'task',
  gatherInput(args, inputResponses) {
    const answer = readElicitResult(inputResponses, LABEL_KEY);
    if (answer === undefined)
      return {
        kind: 'need_input',
        inputRequests: {
          [LABEL_KEY]: elicitForm('Label for this run?', {
            type: 'object',
            properties: { label: { type: 'string' } },
            required: ['label'],
          }),
        },
      };
    const label = acceptedField(answer, 'label', 'string');
    if (label === undefined)
      throw new ProtocolError(ErrorCode.InvalidParams, `${LABEL_KEY}: expected {label: string}`);
    return { kind: 'ready', arguments: { ...args, label } };
  },
  task: {
    initialStatusMessage: 'Starting',
    start: () => ({ done: 0, asked: false }),
    step(raw, args): Promise<StepOutcome> {
      const parsed = StateSchema.safeParse(raw);
      if (!parsed.success)
        throw new Error(`unreadable ${REALISTIC_TOOL} checkpoint: ${parsed.error.message}`);
      const { done, asked } = parsed.data;
      if (done === 1 && !asked)
        return Promise.resolve({
          kind: 'input',
          state: { done, asked: true },
          inputRequests: {
            [APPROVE_KEY]: elicitForm('Go on?', {
              type: 'object',
              properties: { approved: { type: 'boolean' } },
              required: ['approved'],
            }),
          },
          statusMessage: 'Waiting for approval',
        });
      if (done < WORK_STEPS)
        return Promise.resolve({
          kind: 'continue',
          state: { done: done + 1, asked },
          statusMessage: `Step ${done + 1} of ${WORK_STEPS} done`,
        });
      return Promise.resolve({
        kind: 'complete',
        result: textResult(`${args.label ?? 'run'}: ${WORK_STEPS} steps done`),
      });
    },
  },
});
