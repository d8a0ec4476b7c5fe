import type { JsonObject } from '@mcp-tasks/tasks';
import { z } from 'zod';

/**
 * Builds an `elicitation/create` input request (form mode) as it goes into `inputRequests`.
 * The schema is a flat object of primitive properties, as MCP form elicitation allows.
 */
export function elicitForm(message: string, requestedSchema: JsonObject): JsonObject {
  return {
    method: 'elicitation/create',
    params: { mode: 'form', message, requestedSchema },
  };
}

/** An ElicitResult as a client sends it back in `inputResponses`. */
export const ElicitResultSchema = z.object({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), z.unknown()).optional(),
});
export type ElicitResult = z.infer<typeof ElicitResultSchema>;

/**
 * Reads the answer to one input key: `missing` if nothing (or something that is not an
 * ElicitResult) arrived under that key, else the parsed result.
 */
export function readElicitResult(
  responses: Record<string, JsonObject>,
  key: string,
): ElicitResult | undefined {
  const raw = responses[key];
  if (raw === undefined) return undefined;
  const parsed = ElicitResultSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/** The accepted content field `field`, if the user accepted and it has the wanted type. */
export function acceptedField<T extends 'string' | 'boolean'>(
  result: ElicitResult | undefined,
  field: string,
  type: T,
): (T extends 'string' ? string : boolean) | undefined {
  if (result?.action !== 'accept') return undefined;
  const value = result.content?.[field];
  return typeof value === type ? (value as T extends 'string' ? string : boolean) : undefined;
}
