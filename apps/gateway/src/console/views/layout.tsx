/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import { raw } from 'hono/html';
import type { Child, FC } from 'hono/jsx';
import type { ConsoleSession } from '../session.js';

// Server-rendered pages of the console (hono/jsx: escaped by construction). The client script
// (assets.ts) only adds live updates and small conveniences: every page works without it.
// This file: the frame every page shares, and the small pages.

export function age(from: Date, now: number): string {
  const s = Math.max(0, Math.round((now - from.getTime()) / 1000));
  if (s < 90) return `${s}s`;
  if (s < 5400) return `${Math.round(s / 60)}m`;
  if (s < 129600) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

/** A setting's length in the largest whole unit that divides it (7 d, 90 s, 250 ms). */
export function duration(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1_000, 's'],
  ];
  for (const [size, unit] of units)
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  return `${ms} ms`;
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export const Layout: FC<{ title: string; session?: ConsoleSession; children?: Child }> = ({
  title,
  session,
  children,
}) => (
  <>
    {raw('<!DOCTYPE html>')}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · mcp-tasks console`}</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
        {session === undefined ? null : <meta name="csrf-token" content={session.csrfToken} />}
        <script src="/console/assets/console.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header>
          <strong>mcp-tasks console</strong>
          {session === undefined ? null : (
            <nav aria-label="Console">
              <a href="/console">Tasks</a>
              <a href="/console/health">Health</a>
              <span class="who" data-testid="operator">
                {session.operator.tenant === null
                  ? 'all tenants'
                  : `tenant ${session.operator.tenant}`}
                {session.operator.actions ? ' · actions' : ' · read-only'}
              </span>
              <form method="post" action="/console/logout" class="inline">
                <input type="hidden" name="_csrf" value={session.csrfToken} />
                <button type="submit">Log out</button>
              </form>
            </nav>
          )}
        </header>
        <main id="main">{children}</main>
      </body>
    </html>
  </>
);

export const LoginPage: FC<{ error?: string }> = ({ error }) => (
  <Layout title="Log in">
    <h1>Log in</h1>
    <p>Use an operator token of MCP_CONSOLE_TOKENS (not an MCP client token).</p>
    {error === undefined ? null : (
      <p class="error" role="alert">
        {error}
      </p>
    )}
    <form method="post" action="/console/login" class="stack">
      <label for="token">Operator token</label>
      <input
        id="token"
        name="token"
        type="password"
        autocomplete="current-password"
        required
        autofocus
      />
      <button type="submit">Log in</button>
    </form>
  </Layout>
);

export const MessagePage: FC<{ title: string; message: string; session?: ConsoleSession }> = ({
  title,
  message,
  session,
}) => (
  <Layout title={title} session={session}>
    <h1>{title}</h1>
    <p role="alert">{message}</p>
    <p>
      <a href="/console">Back to the tasks</a>
    </p>
  </Layout>
);

export const StatusBadge: FC<{ status: string }> = ({ status }) => (
  <span class={`status status-${status}`}>{status}</span>
);
