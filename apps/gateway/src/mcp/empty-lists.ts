import { parseParams, withServerInfo } from '@mcp-tasks/protocol';
import { z } from 'zod';
import { result, type MethodHandler } from './context.js';

const ListParamsSchema = z.looseObject({
  cursor: z.string().optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});

/**
 * This server has no prompts or resources, but the conformance `caching` scenario lists them and
 * expects cache hints (SEP-2549), so they answer an empty, publicly cacheable list instead of
 * -32601, and discover declares them (server-stateless: capabilities match the handlers).
 */
function emptyList(field: 'prompts' | 'resources' | 'resourceTemplates'): MethodHandler {
  return (ctx, services) => {
    parseParams(ListParamsSchema, ctx.params);
    return Promise.resolve(
      result(
        withServerInfo(
          {
            resultType: 'complete',
            [field]: [],
            ttlMs: services.settings.listTtlMs,
            cacheScope: 'public',
          },
          services.serverInfo,
        ),
      ),
    );
  };
}

export const promptsList = emptyList('prompts');
export const resourcesList = emptyList('resources');
export const resourceTemplatesList = emptyList('resourceTemplates');
