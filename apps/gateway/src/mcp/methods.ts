import { Method, methodNotFoundError } from '@mcp-tasks/protocol';
import type { MethodHandler } from './context.js';
import { serverDiscover } from './discover.js';
import { promptsList, resourceTemplatesList, resourcesList } from './empty-lists.js';
import { subscriptionsListen } from './subscriptions.js';
import { tasksCancel, tasksGet, tasksUpdate } from './tasks.js';
import { toolsCall, toolsList } from './tools.js';

/** Every method this server answers; anything else is -32601 (R5). */
export const METHOD_HANDLERS: Readonly<Record<string, MethodHandler>> = {
  [Method.ServerDiscover]: serverDiscover,
  [Method.ToolsList]: toolsList,
  [Method.ToolsCall]: toolsCall,
  [Method.TasksGet]: tasksGet,
  [Method.TasksUpdate]: tasksUpdate,
  [Method.TasksCancel]: tasksCancel,
  [Method.SubscriptionsListen]: subscriptionsListen,
  'prompts/list': promptsList,
  'resources/list': resourcesList,
  'resources/templates/list': resourceTemplatesList,
};

export function handlerFor(method: string): MethodHandler {
  const handler = Object.hasOwn(METHOD_HANDLERS, method) ? METHOD_HANDLERS[method] : undefined;
  if (handler !== undefined) return handler;
  throw methodNotFoundError(method);
}

/** A bounded label set for metrics: unknown methods must not explode cardinality. */
export function methodLabel(method: string | undefined): string {
  if (method === undefined) return 'invalid';
  return Object.hasOwn(METHOD_HANDLERS, method) ? method : 'unknown';
}
