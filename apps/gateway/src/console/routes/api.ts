import type { TaskEvent } from '@mcp-tasks/store';
import type { JsonObject } from '@mcp-tasks/tasks';
import type { ConsoleApp, ConsoleDeps } from './shared.js';

/** The JSON API under /api (bearer token or session): a task's history, for the CLI. */
export function addApiRoutes(app: ConsoleApp, deps: ConsoleDeps): void {
  const { service } = deps;

  app.get('/api/tasks/:id/history', async (c) => {
    const session = c.get('session');
    const taskId = c.req.param('id');
    const events = await service.getHistory({ tenant: session.operator.tenant }, taskId);
    if (events === undefined)
      return c.json(
        { error: 'not_found', message: `no task ${taskId} is visible to this operator` },
        404,
      );
    return c.json({ taskId, events: events.map(eventJson) });
  });
}

function eventJson(event: TaskEvent): JsonObject {
  return {
    id: event.id,
    at: event.at.toISOString(),
    kind: event.kind,
    actor: event.actor,
    data: event.data,
  };
}
