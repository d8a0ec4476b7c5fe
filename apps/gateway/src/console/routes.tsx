import { Hono } from 'hono';
import { consoleAssets } from './assets.js';
import type { ConsoleOperator } from './operators.js';
import { addActionRoutes } from './routes/actions.js';
import { addApiRoutes } from './routes/api.js';
import { addLiveRoute } from './routes/live.js';
import { addLoginAndGuards } from './routes/login.js';
import { addPageRoutes } from './routes/pages.js';
import type { ConsoleEnv, ConsoleRoutesOptions } from './routes/shared.js';

export { MAX_CONSOLE_STREAMS } from './routes/live.js';
export type { ConsoleRoutesOptions } from './routes/shared.js';

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

/**
 * The operator console under /console (docs/console.md). Order matters: the assets and login
 * come before the session guards; every route group after them needs a session.
 */
export function createConsoleRoutes(options: ConsoleRoutesOptions): Hono<ConsoleEnv> {
  const deps = {
    options,
    service: options.console,
    logger: options.logger,
    now: options.now ?? Date.now,
  };
  const app = new Hono<ConsoleEnv>();

  app.use('*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS))
      if (!c.res.headers.has(name)) c.res.headers.set(name, value);
  });
  app.route('/assets', consoleAssets());
  addLoginAndGuards(app, deps);
  addPageRoutes(app, deps);
  addActionRoutes(app, deps);
  addLiveRoute(app, deps);
  addApiRoutes(app, deps);
  return app;
}

export type { ConsoleOperator };
