import { buildDiscoverResult, parseParams, DiscoverParamsSchema } from '@mcp-tasks/protocol';
import { result, type MethodHandler } from './context.js';

/**
 * R7: the same for every caller, so it may be cached publicly. `prompts` and `resources` are
 * declared because their (empty) list methods are served (see empty-lists.ts): CONF
 * server-stateless requires the capabilities to match the handlers.
 */
export const serverDiscover: MethodHandler = (ctx, services) => {
  parseParams(DiscoverParamsSchema, ctx.params);
  const discovered = buildDiscoverResult({
    serverInfo: services.serverInfo,
    ttlMs: services.settings.listTtlMs,
    cacheScope: 'public',
  });
  return Promise.resolve(
    result({
      ...discovered,
      capabilities: { ...discovered.capabilities, prompts: {}, resources: {} },
    }),
  );
};
