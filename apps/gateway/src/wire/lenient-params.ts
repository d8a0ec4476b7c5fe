import {
  CallToolParamsSchema,
  JsonObjectSchema,
  UpdateTaskParamsSchema,
} from '@mcp-tasks/protocol';
import { z } from 'zod';

/**
 * `inputResponses` as the gateway admits it: any object of objects. The protocol schemas type
 * each value as an ElicitResult | CreateMessageResult | ListRootsResult, but answers to keys that
 * are not outstanding must be ignored, not rejected (R17; CONF tasks-dispatch-and-envelope sends
 * `{"unknown-key": {"ignored": true}}` and expects the ack). Only the receiver of an outstanding
 * key (the tool's gatherInput, or the worker's step) knows what shape that key needs, so it
 * checks the value.
 */
export const AnyInputResponsesSchema = z.record(z.string(), JsonObjectSchema);

export const LenientUpdateTaskParamsSchema = UpdateTaskParamsSchema.extend({
  inputResponses: AnyInputResponsesSchema,
});

export const LenientCallToolParamsSchema = CallToolParamsSchema.extend({
  inputResponses: AnyInputResponsesSchema.optional(),
});
