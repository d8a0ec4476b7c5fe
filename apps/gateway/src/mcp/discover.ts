import { buildDiscoverResult, parseParams, DiscoverParamsSchema } from '@mcp-tasks/protocol';
import { result, type MethodHandler } from './context.js';

/** R7: the same for every caller, so it may be cached publicly. */
export const serverDiscover: MethodHandler = (ctx, services) => {
  parseParams(DiscoverParamsSchema, ctx.params);
  return Promise.resolve(
    result(
      buildDiscoverResult({
        serverInfo: services.serverInfo,
        ttlMs: services.settings.listTtlMs,
        cacheScope: 'public',
      }),
    ),
  );
};
