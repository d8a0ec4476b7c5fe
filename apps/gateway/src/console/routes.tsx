/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import type { ConsoleService, TaskEvent } from '@mcp-tasks/store';
import { MAX_BULK_CANCEL, SEARCH_SCAN_ROWS } from '@mcp-tasks/store';
import type { InputResponses, JsonObject, JsonValue } from '@mcp-tasks/tasks';
import { Hono, type Context } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import type { Logger } from 'pino';
import { createSseStream } from '../sse.js';
import { consoleAssets } from './assets.js';
import type { EventTail } from './event-tail.js';
import { looksLikeJwt, type ConsoleJwtLogin } from './jwt-login.js';
import {
  DEFAULT_LOGIN_LIMITS,
  clientAddress,
  createLoginLimiter,
  type LoginLimits,
} from './login-limiter.js';
import {
  ListQueryError,
  describeFilter,
  encodeCursor,
  parseListQuery,
  type ParsedListQuery,
} from './list-query.js';
import type { ConsoleOperator } from './operators.js';
import {
  SESSION_COOKIE,
  SESSION_TTL_MS,
  type ConsoleSession,
  type SessionKeeper,
} from './session.js';
import {
  BulkCancelPage,
  HealthPage,
  ListPage,
  LoginPage,
  MessagePage,
  TaskPage,
  TaskRowView,
} from './views.js';

export interface ConsoleRoutesOptions {
  console: ConsoleService;
  sessions: SessionKeeper;
  /** MCP_AUTH=jwt with MCP_CONSOLE_ROLE_CLAIM: a JWT carrying the claim logs in too. */
  jwtLogin?: ConsoleJwtLogin | undefined;
  /** Failed logins allowed per client address and per token prefix (docs/console.md). */
  loginLimits?: LoginLimits;
  tail: EventTail;
  logger: Logger;
  /** What the health page says about queue consumers (the gateway's worker liveness). */
  workers?: () => Promise<unknown>;
  keepAliveMs: number;
  /** TASK_TTL_MS: shown on the health page. */
  taskTtlMs: number;
  /** Aborted when the gateway drains: live pages close (their EventSource reconnects elsewhere). */
  shutdownSignal: AbortSignal;
  now?: () => number;
}

type ConsoleEnv = { Variables: { session: ConsoleSession } };

/** Live console pages open at once on one gateway; one more is answered 503. */
export const MAX_CONSOLE_STREAMS = 100;
const PAGE_SIZE = 50;
const LIVE_ROWS_PER_BATCH = 200;

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

function sessionCookieOf(c: {
  req: { header(name: string): string | undefined };
}): string | undefined {
  for (const part of (c.req.header('cookie') ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=');
  }
  return undefined;
}

function isSecure(c: Context): boolean {
  return new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
}

async function render(element: { toString(): string | Promise<string> }): Promise<string> {
  return String(await element.toString());
}

/** The operator console under /console (docs/console.md). */
export function createConsoleRoutes(options: ConsoleRoutesOptions): Hono<ConsoleEnv> {
  const { sessions, logger, jwtLogin } = options;
  const loginLimiter = createLoginLimiter(options.loginLimits ?? DEFAULT_LOGIN_LIMITS);
  const service = options.console;
  const now = options.now ?? Date.now;
  let openStreams = 0;
  const app = new Hono<ConsoleEnv>();

  app.use('*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS))
      if (!c.res.headers.has(name)) c.res.headers.set(name, value);
  });

  app.route('/assets', consoleAssets());

  app.get('/login', (c) => c.html(<LoginPage />));
  type LoginResult =
    | { ok: true; operator: ConsoleOperator; cookie: string; maxAgeS: number }
    | { ok: false; status: 401 | 503; message: string; retryAfterS?: number };

  /** A console token, or (MCP_CONSOLE_ROLE_CLAIM set) a JWT carrying the role claim. */
  const resolveCredential = async (token: string): Promise<LoginResult> => {
    const operator = sessions.operatorForToken(token);
    const ttlS = Math.floor(SESSION_TTL_MS / 1000);
    if (operator !== undefined)
      return { ok: true, operator, cookie: sessions.issue(operator, now()), maxAgeS: ttlS };
    if (jwtLogin !== undefined && looksLikeJwt(token)) {
      const result = await jwtLogin.operatorFor(token);
      if (!result.ok) return result;
      return {
        ok: true,
        operator: result.operator,
        cookie: sessions.issueForJwt(token),
        maxAgeS: Math.max(1, Math.min(ttlS, Math.floor((result.expiresAtMs - now()) / 1000))),
      };
    }
    return {
      ok: false,
      status: 401,
      message:
        jwtLogin === undefined
          ? 'That token is not an operator token of this console.'
          : `That token is neither an operator token of this console nor a JWT with the "${jwtLogin.roleClaim}" claim.`,
    };
  };

  app.post('/login', async (c) => {
    const address = clientAddress(c);
    const form = await c.req.parseBody();
    const token = typeof form.token === 'string' ? form.token : '';
    const limited = loginLimiter.check(address, token, now());
    if (limited !== undefined) {
      logger.warn({ address }, 'console login rate limited');
      return c.html(
        <LoginPage
          error={`Too many failed logins from this address or with this token: try again in ${limited} s.`}
        />,
        429,
        { 'Retry-After': String(limited) },
      );
    }
    const login = await resolveCredential(token);
    if (!login.ok) {
      loginLimiter.failed(address, token, now());
      logger.info({ address, status: login.status }, 'console login refused');
      return c.html(
        <LoginPage error={login.message} />,
        login.status,
        login.retryAfterS === undefined ? {} : { 'Retry-After': String(login.retryAfterS) },
      );
    }
    setCookie(c, SESSION_COOKIE, login.cookie, {
      httpOnly: true,
      sameSite: 'Strict',
      secure: isSecure(c),
      path: '/console',
      maxAge: login.maxAgeS,
    });
    logger.info({ actor: login.operator.actor }, 'console login');
    return c.redirect('/console', 303);
  });

  // The JSON API (the CLI's `history`) takes the operator token (or JWT) as a bearer token;
  // pages take the session cookie.
  app.use('/api/*', async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer (.+)$/i.exec(header);
    const bearer = match?.[1] === undefined ? undefined : await resolveCredential(match[1]);
    const session = bearer?.ok
      ? { operator: bearer.operator, cookie: '', csrfToken: '' }
      : await sessions.verify(sessionCookieOf(c), now());
    if (session === undefined)
      return c.json(
        {
          error: 'unauthorized',
          message:
            bearer === undefined || bearer.ok
              ? 'send a console operator token as "Authorization: Bearer <token>"'
              : bearer.message,
        },
        bearer?.ok === false ? bearer.status : 401,
        { 'WWW-Authenticate': 'Bearer realm="mcp-tasks console"' },
      );
    c.set('session', session);
    await next();
  });

  app.use('*', async (c, next) => {
    if (c.req.path.startsWith('/console/api/')) return next();
    const session = await sessions.verify(sessionCookieOf(c), now());
    if (session === undefined) {
      if (c.req.method === 'GET') return c.redirect('/console/login', 303);
      return c.html(
        <MessagePage title="Not logged in" message="Log in again: your session ended." />,
        401,
      );
    }
    c.set('session', session);
    if (c.req.method === 'POST') {
      const submitted =
        c.req.header('x-csrf-token') ??
        (await c.req
          .parseBody()
          .then((form) => (typeof form._csrf === 'string' ? form._csrf : undefined)));
      if (!sessions.csrfMatches(session, submitted)) {
        logger.warn({ actor: session.operator.actor, path: c.req.path }, 'console CSRF refusal');
        return c.html(
          <MessagePage
            title="Refused"
            session={session}
            message="This form's CSRF token is missing or not this session's: reload the page and try again. Nothing was changed."
          />,
          403,
        );
      }
    }
    await next();
  });

  const requireActions = async (c: Context<ConsoleEnv>): Promise<Response | undefined> => {
    const session = c.get('session');
    if (session.operator.actions) return undefined;
    return c.html(
      <MessagePage
        title="Read-only"
        session={session}
        message="This operator token is read-only: actions need a token marked :actions in MCP_CONSOLE_TOKENS. Nothing was changed."
      />,
      403,
    );
  };

  const badQuery = async (c: Context<ConsoleEnv>, error: unknown): Promise<Response> => {
    if (!(error instanceof ListQueryError)) throw error;
    return c.html(
      <MessagePage title="Bad filter" session={c.get('session')} message={error.message} />,
      400,
    );
  };

  app.post('/logout', (c) => {
    deleteCookie(c, SESSION_COOKIE, { path: '/console' });
    return c.redirect('/console/login', 303);
  });

  app.get('/', async (c) => {
    const session = c.get('session');
    let parsed: ParsedListQuery;
    try {
      parsed = parseListQuery(new URL(c.req.url).searchParams);
    } catch (error) {
      return await badQuery(c, error);
    }
    const scope = { tenant: session.operator.tenant };
    const page = await service.listTasks(scope, parsed.filter, {
      limit: PAGE_SIZE,
      ...(parsed.cursor === undefined ? {} : { cursor: parsed.cursor }),
    });
    const sep = parsed.filterString === '' ? '?' : '&';
    return c.html(
      <ListPage
        session={session}
        query={parsed.query}
        queryString={parsed.filterString}
        rows={page.rows}
        firstPage={parsed.cursor === undefined}
        searchCut={
          page.searchCut === true && page.next !== undefined
            ? { scanned: SEARCH_SCAN_ROWS, to: new Date(page.next.createdAt) }
            : undefined
        }
        now={now()}
        {...(page.next === undefined
          ? {}
          : { nextHref: `/console${parsed.filterString}${sep}after=${encodeCursor(page.next)}` })}
      />,
    );
  });

  const taskPage = async (
    c: Context<ConsoleEnv>,
    taskId: string,
    notice?: string,
    status = 200,
  ) => {
    const session = c.get('session');
    const scope = { tenant: session.operator.tenant };
    const task = await service.getTask(scope, taskId);
    if (task === undefined)
      return c.html(
        <MessagePage
          title="No such task"
          session={session}
          message="No task with this id is visible to this operator."
        />,
        404,
      );
    const events = (await service.getHistory(scope, taskId)) ?? [];
    return c.html(
      <TaskPage
        session={session}
        task={task}
        events={events}
        {...(notice === undefined ? {} : { notice })}
      />,
      status as 200,
    );
  };

  app.get('/tasks/:id', (c) => taskPage(c, c.req.param('id')));

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
        c,
        taskId,
        `Nothing answered: "${key}" is not an outstanding input request of this task.`,
        409,
      );
    let response: JsonObject;
    if (form.action === 'decline') response = { action: 'decline' };
    else {
      const content = contentFromForm(request, form);
      if (typeof content === 'string') return taskPage(c, taskId, content, 400);
      response = { action: 'accept', content };
    }
    const responses: InputResponses = { [key]: response };
    const { answered } = await service.answer(scope, taskId, responses, session.operator.actor);
    return taskPage(
      c,
      taskId,
      answered.length > 0
        ? `Answered ${key}.`
        : `Nothing answered: "${key}" was answered meanwhile.`,
    );
  });

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

  app.get('/health', async (c) => {
    const session = c.get('session');
    const scope = { tenant: session.operator.tenant };
    const [health, throughput, latency, workers] = await Promise.all([
      service.health(scope),
      service.throughput(scope),
      service.latency(scope),
      options.workers?.().catch(() => ({ status: 'unknown' })),
    ]);
    return c.html(
      <HealthPage
        session={session}
        health={health}
        workers={workers}
        now={now()}
        throughput={throughput}
        latency={latency}
        settings={{ taskTtlMs: options.taskTtlMs }}
      />,
    );
  });

  app.get('/live', async (c) => {
    const session = c.get('session');
    const scope = { tenant: session.operator.tenant };
    const params = new URL(c.req.url).searchParams;
    const watchedTask = params.get('task');
    let parsed: ParsedListQuery;
    try {
      parsed = parseListQuery(params);
    } catch (error) {
      return await badQuery(c, error);
    }
    if (openStreams >= MAX_CONSOLE_STREAMS)
      return c.text('too many live console pages on this gateway; retry shortly', 503, {
        'Retry-After': '5',
      });
    openStreams++;
    const stream = createSseStream({ keepAliveMs: options.keepAliveMs });
    const unsubscribe = options.tail.subscribe((marks) => {
      const visible = marks.filter((mark) => scope.tenant === null || mark.tenant === scope.tenant);
      if (watchedTask !== null) {
        if (visible.some((mark) => mark.taskId === watchedTask)) stream.send({ task: watchedTask });
        return;
      }
      const ids = [...new Set(visible.map((mark) => mark.taskId))].slice(-LIVE_ROWS_PER_BATCH);
      if (ids.length === 0) return;
      void service
        .getTaskRows(scope, ids, parsed.filter)
        .then(async (rows) => {
          const at = now();
          const rendered = await Promise.all(
            rows.map(async (row) => ({
              id: row.id,
              matches: row.matches,
              createdAt: row.createdAt.toISOString(),
              html: await render(<TaskRowView row={row} now={at} />),
            })),
          );
          if (rendered.length > 0) stream.send({ rows: rendered });
        })
        .catch((error: unknown) => logger.warn({ err: error }, 'console live rows failed'));
    });
    const closeOnDrain = (): void => stream.close();
    options.shutdownSignal.addEventListener('abort', closeOnDrain, { once: true });
    stream.onClose(() => {
      openStreams--;
      unsubscribe();
      options.shutdownSignal.removeEventListener('abort', closeOnDrain);
    });
    stream.send({ ready: true });
    return stream.response;
  });

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

  return app;
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

export type { ConsoleOperator };
