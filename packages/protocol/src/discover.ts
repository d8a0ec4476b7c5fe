import { z } from 'zod';
import { SUPPORTED_PROTOCOL_VERSIONS, TASKS_EXTENSION_ID } from './constants.js';
import { ServerCapabilitiesSchema, type ServerCapabilities } from './capabilities.js';
import type { Implementation } from './meta.js';
import { CacheHintsShape, ResultMetaSchema, withServerInfo, type CacheHints } from './results.js';

/** `server/discover` takes nothing but `_meta`. */
export const DiscoverParamsSchema = z.looseObject({
  _meta: z.record(z.string(), z.unknown()).optional(),
});

export const DiscoverResultSchema = z.looseObject({
  resultType: z.literal('complete'),
  supportedVersions: z.array(z.string()).min(1),
  capabilities: ServerCapabilitiesSchema,
  instructions: z.string().optional(),
  ...CacheHintsShape,
  _meta: ResultMetaSchema.optional(),
});
export type DiscoverResult = z.infer<typeof DiscoverResultSchema>;

export interface DiscoverOptions extends CacheHints {
  serverInfo: Implementation;
  supportedVersions?: readonly string[];
  instructions?: string;
}

/** Our capabilities: tools plus the Tasks extension, never v1 `capabilities.tasks` (R7). */
export function serverCapabilities(): ServerCapabilities {
  return { tools: {}, extensions: { [TASKS_EXTENSION_ID]: {} } };
}

export function buildDiscoverResult(options: DiscoverOptions): DiscoverResult {
  const result: DiscoverResult = {
    resultType: 'complete',
    supportedVersions: [...(options.supportedVersions ?? SUPPORTED_PROTOCOL_VERSIONS)],
    capabilities: serverCapabilities(),
    ttlMs: options.ttlMs,
    cacheScope: options.cacheScope,
  };
  if (options.instructions !== undefined) result.instructions = options.instructions;
  return withServerInfo(result, options.serverInfo);
}
