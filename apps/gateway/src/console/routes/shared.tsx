/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import type { ConsoleService } from '@mcp-tasks/store';
import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import type { EventTail } from '../event-tail.js';
import type { ConsoleJwtLogin } from '../jwt-login.js';
import { ListQueryError } from '../list-query.js';
import type { LoginLimits } from '../login-limiter.js';
import { SESSION_COOKIE, type ConsoleSession, type SessionKeeper } from '../session.js';
import { MessagePage, TaskPage } from '../views.js';

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

export type ConsoleEnv = { Variables: { session: ConsoleSession } };
export type ConsoleApp = Hono<ConsoleEnv>;

/** What every route group reads: the options, the store's console door and the clock. */
export interface ConsoleDeps {
  options: ConsoleRoutesOptions;
  service: ConsoleService;
  logger: Logger;
  now: () => number;
}

export function sessionCookieOf(c: {
  req: { header(name: string): string | undefined };
}): string | undefined {
  for (const part of (c.req.header('cookie') ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=');
  }
  return undefined;
}

export function isSecure(c: Context): boolean {
  return new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
}

export async function render(element: { toString(): string | Promise<string> }): Promise<string> {
  return String(await element.toString());
}

/** A 403 page unless the session's operator may act (a token marked :actions). */
export async function requireActions(c: Context<ConsoleEnv>): Promise<Response | undefined> {
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
}

/** A 400 page for a filter the list query refused; anything else is rethrown. */
export async function badQuery(c: Context<ConsoleEnv>, error: unknown): Promise<Response> {
  if (!(error instanceof ListQueryError)) throw error;
  return c.html(
    <MessagePage title="Bad filter" session={c.get('session')} message={error.message} />,
    400,
  );
}

/** One task's page (a notice above it after an action), or 404 when the operator cannot see it. */
export async function taskPage(
  deps: ConsoleDeps,
  c: Context<ConsoleEnv>,
  taskId: string,
  notice?: string,
  status = 200,
): Promise<Response> {
  const session = c.get('session');
  const scope = { tenant: session.operator.tenant };
  const task = await deps.service.getTask(scope, taskId);
  if (task === undefined)
    return c.html(
      <MessagePage
        title="No such task"
        session={session}
        message="No task with this id is visible to this operator."
      />,
      404,
    );
  const events = (await deps.service.getHistory(scope, taskId)) ?? [];
  return c.html(
    <TaskPage
      session={session}
      task={task}
      events={events}
      {...(notice === undefined ? {} : { notice })}
    />,
    status as 200,
  );
}
