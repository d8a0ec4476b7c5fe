import { z } from 'zod';
import {
  CreateMessageResultV2Schema,
  ElicitResultV2Schema,
  InputRequestsV2Schema,
  InputRequestV2Schema,
  InputResponsesV2Schema,
  ListRootsResultV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import type { Implementation } from './meta.js';
import { ResultMetaSchema, withServerInfo } from './results.js';

/** Reused from ext-tasks: the pinned 2026-07-28 request shapes an input request may take. */
export const InputRequestSchema = InputRequestV2Schema;
export const InputRequestsSchema = InputRequestsV2Schema;
export type InputRequest = z.infer<typeof InputRequestSchema>;
export type InputRequests = z.infer<typeof InputRequestsSchema>;

/** Reused from ext-tasks: answers are ElicitResult | CreateMessageResult | ListRootsResult. */
export const ElicitResultSchema = ElicitResultV2Schema;
export const CreateMessageResultSchema = CreateMessageResultV2Schema;
export const ListRootsResultSchema = ListRootsResultV2Schema;
export const InputResponsesSchema = InputResponsesV2Schema;
export type ElicitResult = z.infer<typeof ElicitResultSchema>;
export type InputResponses = z.infer<typeof InputResponsesSchema>;

/** What we emit for an elicitation: always form mode, with an object `requestedSchema`. */
export const ElicitFormRequestSchema = z.strictObject({
  method: z.literal('elicitation/create'),
  params: z.looseObject({
    mode: z.literal('form'),
    message: z.string().min(1),
    requestedSchema: z.looseObject({
      type: z.literal('object'),
      properties: z.record(z.string(), z.record(z.string(), z.unknown())),
      required: z.array(z.string()).optional(),
    }),
  }),
});
export type ElicitFormRequest = z.infer<typeof ElicitFormRequestSchema>;

export function buildElicitationRequest(
  message: string,
  requestedSchema: ElicitFormRequest['params']['requestedSchema'],
): ElicitFormRequest {
  return { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } };
}

/** Core MRTR result (R13): at least one of `inputRequests` and `requestState`. */
export const InputRequiredResultSchema = z
  .looseObject({
    resultType: z.literal('input_required'),
    inputRequests: InputRequestsSchema.optional(),
    requestState: z.string().optional(),
    _meta: ResultMetaSchema.optional(),
  })
  .refine((r) => r.inputRequests !== undefined || r.requestState !== undefined, {
    message: 'an input_required result needs inputRequests, requestState or both',
  });

export function buildInputRequiredResult(
  round: { inputRequests?: Record<string, unknown>; requestState?: string },
  serverInfo: Implementation,
): {
  resultType: 'input_required';
  inputRequests?: Record<string, unknown>;
  requestState?: string;
  _meta: Record<string, unknown>;
} {
  if (round.inputRequests === undefined && round.requestState === undefined) {
    throw new Error('an input_required result needs inputRequests, requestState or both');
  }
  const result: {
    resultType: 'input_required';
    inputRequests?: Record<string, unknown>;
    requestState?: string;
  } = {
    resultType: 'input_required',
  };
  if (round.inputRequests !== undefined) result.inputRequests = round.inputRequests;
  if (round.requestState !== undefined) result.requestState = round.requestState;
  return withServerInfo(result, serverInfo);
}
