/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import { setCookie } from 'hono/cookie';
import { looksLikeJwt } from '../jwt-login.js';
import { DEFAULT_LOGIN_LIMITS, clientAddress, createLoginLimiter } from '../login-limiter.js';
import type { ConsoleOperator } from '../operators.js';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../session.js';
import { LoginPage, MessagePage } from '../views.js';
import { isSecure, sessionCookieOf, type ConsoleApp, type ConsoleDeps } from './shared.js';

type LoginResult =
  | { ok: true; operator: ConsoleOperator; cookie: string; maxAgeS: number }
  | { ok: false; status: 401 | 503; message: string; retryAfterS?: number };

type ResolveCredential = (token: string) => Promise<LoginResult>;

/** A console token, or (MCP_CONSOLE_ROLE_CLAIM set) a JWT carrying the role claim. */
function credentialResolver(deps: ConsoleDeps): ResolveCredential {
  const { sessions, jwtLogin } = deps.options;
  const { now } = deps;
  return async (token) => {
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
}

/** GET and POST /login: the only pages served without a session; failed logins are limited. */
function addLoginRoutes(app: ConsoleApp, deps: ConsoleDeps, resolve: ResolveCredential): void {
  const { logger, now } = deps;
  const loginLimiter = createLoginLimiter(deps.options.loginLimits ?? DEFAULT_LOGIN_LIMITS);
  app.get('/login', (c) => c.html(<LoginPage />));
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
    const login = await resolve(token);
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
}

/**
 * Everything registered after these needs a session. The JSON API (the CLI's `history`) takes the
 * operator token (or JWT) as a bearer token; pages take the session cookie, and a POST the
 * session's CSRF token as well.
 */
function addSessionGuards(app: ConsoleApp, deps: ConsoleDeps, resolve: ResolveCredential): void {
  const { sessions } = deps.options;
  const { logger, now } = deps;
  app.use('/api/*', async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer (.+)$/i.exec(header);
    const bearer = match?.[1] === undefined ? undefined : await resolve(match[1]);
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
}

/** Login first (no session needed), then the guards every later route sits behind. */
export function addLoginAndGuards(app: ConsoleApp, deps: ConsoleDeps): void {
  const resolve = credentialResolver(deps);
  addLoginRoutes(app, deps, resolve);
  addSessionGuards(app, deps, resolve);
}
