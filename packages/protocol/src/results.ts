import { z } from 'zod';
import { META_SERVER_INFO } from './constants.js';
import { copyForExtension } from './json.js';
import { ImplementationSchema, type Implementation } from './meta.js';

/** Result `_meta`: loose, with the server identity every result of ours carries (R6). */
export const ResultMetaSchema = z.looseObject({
  [META_SERVER_INFO]: ImplementationSchema.optional(),
});

/** Cache hints required on discover and list results (DISC; CHG). */
export const CacheScopeSchema = z.enum(['public', 'private']);
export type CacheScope = z.infer<typeof CacheScopeSchema>;
export const CacheHintsShape = {
  ttlMs: z.int().nonnegative(),
  cacheScope: CacheScopeSchema,
};
export interface CacheHints {
  ttlMs: number;
  cacheScope: CacheScope;
}

/** Adds `_meta["io.modelcontextprotocol/serverInfo"]`, keeping any other `_meta` keys (R6). */
export function withServerInfo<R extends object>(
  result: R,
  serverInfo: Implementation,
): R & { _meta: Record<string, unknown> } {
  const existing = (result as { _meta?: unknown })._meta;
  const meta: Record<string, unknown> =
    typeof existing === 'object' && existing !== null
      ? copyForExtension(existing as Record<string, unknown>)
      : {};
  meta[META_SERVER_INFO] = serverInfo;
  const extended = copyForExtension(result) as R & { _meta: Record<string, unknown> };
  extended._meta = meta;
  return extended;
}

/** The empty acknowledgement of tasks/update and tasks/cancel (R17, R18). */
export const EmptyResultSchema = z
  .looseObject({
    resultType: z.literal('complete'),
    _meta: ResultMetaSchema.optional(),
  })
  .refine(
    (r) => !['taskId', 'status', 'result', 'error', 'inputRequests'].some((key) => key in r),
    {
      message:
        'an acknowledgement carries no task fields (taskId, status, result, error, inputRequests)',
    },
  );
export type EmptyResult = { resultType: 'complete'; _meta: Record<string, unknown> };

export function buildEmptyResult(serverInfo: Implementation): EmptyResult {
  return withServerInfo({ resultType: 'complete' as const }, serverInfo);
}
