/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import { MAX_BULK_CANCEL } from '@mcp-tasks/store';
import type { InputResponses, JsonObject, JsonValue } from '@mcp-tasks/tasks';
import { deleteCookie } from 'hono/cookie';
import { describeFilter, parseListQuery, type ParsedListQuery } from '../list-query.js';
import { SESSION_COOKIE } from '../session.js';
import { BulkCancelPage, MessagePage } from '../views.js';
import { badQuery, requireActions, taskPage, type ConsoleApp, type ConsoleDeps } from './shared.js';

/** Log out, and what an operator with :actions may do: cancel, answer, bulk cancel. */
export function addActionRoutes(app: ConsoleApp, deps: ConsoleDeps): void {
  app.post('/logout', (c) => {
    deleteCookie(c, SESSION_COOKIE, { path: '/console' });
    return c.redirect('/console/login', 303);
  });
  addTaskActions(app, deps);
  addBulkCancel(app, deps);
}

/** On one task's page: cancel it, answer (or decline) one of its input requests. */
function addTaskActions(app: ConsoleApp, deps: ConsoleDeps): void {
  const { service } = deps;

  app.post('/tasks/:id/cancel', async (c) => {
    const refused = await requireActions(c);
    if (refused !== undefined) return refused;
    const session = c.get('session');
    const taskId = c.req.param('id');
    const changed = await service.cancel(
      { tenant: session.operator.tenant },
      { taskIds: [taskId] },
      session.operator.actor,
    );
    return taskPage(
      deps,
      c,
      taskId,
      changed.length === 1
        ? 'Cancel requested.'
        : 'Nothing to cancel: the task has ended or a cancel was already requested.',
    );
  });

  app.post('/tasks/:id/answer', async (c) => {
    const refused = await requireActions(c);
    if (refused !== undefined) return refused;
    const session = c.get('session');
    const scope = { tenant: session.operator.tenant };
    const taskId = c.req.param('id');
    const form = await c.req.parseBody();
    const key = typeof form.key === 'string' ? form.key : '';
    const task = await service.getTask(scope, taskId);
    const request = task?.inputRequests[key];
    if (task === undefined || request === undefined)
      return taskPage(
        deps,
        c,
        taskId,
        `Nothing answered: "${key}" is not an outstanding input request of this task.`,
        409,
      );
    let response: JsonObject;
    if (form.action === 'decline') response = { action: 'decline' };
    else {
      const content = contentFromForm(request, form);
      if (typeof content === 'string') return taskPage(deps, c, taskId, content, 400);
      response = { action: 'accept', content };
    }
    const responses: InputResponses = { [key]: response };
    const { answered } = await service.answer(scope, taskId, responses, session.operator.actor);
    return taskPage(
      deps,
      c,
      taskId,
      answered.length > 0
        ? `Answered ${key}.`
        : `Nothing answered: "${key}" was answered meanwhile.`,
    );
  });
}

/** Cancel by filter: a preview with the count (GET), then the cancel itself (POST). */
function addBulkCancel(app: ConsoleApp, deps: ConsoleDeps): void {
  const { service, logger } = deps;

  app.get('/bulk-cancel', async (c) => {
    const refused = await requireActions(c);
    if (refused !== undefined) return refused;
    const session = c.get('session');
    let parsed: ParsedListQuery;
    try {
      parsed = parseListQuery(new URL(c.req.url).searchParams);
    } catch (error) {
      return await badQuery(c, error);
    }
    const count = await service.countCancellable(
      { tenant: session.operator.tenant },
      parsed.filter,
    );
    return c.html(
      <BulkCancelPage
        session={session}
        count={count}
        limit={MAX_BULK_CANCEL}
        query={Object.fromEntries(
          [...new URLSearchParams(parsed.filterString).keys()].map((name) => [
            name,
            new URLSearchParams(parsed.filterString).getAll(name),
          ]),
        )}
        description={describeFilter(parsed.query)}
      />,
    );
  });

  app.post('/bulk-cancel', async (c) => {
    const refused = await requireActions(c);
    if (refused !== undefined) return refused;
    const session = c.get('session');
    const form = await c.req.parseBody({ all: true });
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(form)) {
      if (name === '_csrf' || name === 'expected') continue;
      for (const item of Array.isArray(value) ? value : [value])
        if (typeof item === 'string') params.append(name, item);
    }
    let parsed: ParsedListQuery;
    try {
      parsed = parseListQuery(params);
    } catch (error) {
      return await badQuery(c, error);
    }
    const cancelled = await service.cancel(
      { tenant: session.operator.tenant },
      { filter: parsed.filter },
      session.operator.actor,
    );
    logger.info({ actor: session.operator.actor, count: cancelled.length }, 'console bulk cancel');
    return c.html(
      <MessagePage
        title="Cancelled"
        session={session}
        message={`Cancel requested for ${cancelled.length} task${cancelled.length === 1 ? '' : 's'} (${describeFilter(parsed.query)}).`}
      />,
    );
  });
}

/**
 * The elicitation form's fields as the request's `requestedSchema` types them; a string says
 * what is wrong (a required field left empty, a number that is not one).
 */
function contentFromForm(
  request: JsonObject,
  form: Record<string, string | File | (string | File)[]>,
): JsonObject | string {
  const params = (request.params ?? {}) as JsonObject;
  const schema = (params.requestedSchema ?? {}) as JsonObject;
  const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
  const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
  const content: Record<string, JsonValue> = {};
  for (const [name, property] of Object.entries(properties)) {
    const raw = form[`field.${name}`];
    const value = typeof raw === 'string' ? raw : undefined;
    if (property.type === 'boolean') {
      content[name] = value === 'true';
      continue;
    }
    if (value === undefined || value === '') {
      if (required.includes(name)) return `Nothing answered: "${name}" is required.`;
      continue;
    }
    if (property.type === 'number' || property.type === 'integer') {
      const number = Number(value);
      if (!Number.isFinite(number) || (property.type === 'integer' && !Number.isInteger(number)))
        return `Nothing answered: "${name}" must be ${property.type === 'integer' ? 'an integer' : 'a number'}.`;
      content[name] = number;
    } else content[name] = value;
  }
  return content;
}
