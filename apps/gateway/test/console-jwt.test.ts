import { createTask, type NewTask } from '@mcp-tasks/store';
import { newTaskId, type TaskOwner } from '@mcp-tasks/tasks';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { consoleFromConfig } from '../src/console/config.js';
import { parseEnv, type GatewayConfig } from '../src/env.js';
import { useGatewayUnderTest } from './support/harness.js';

// Issue 27 item 1: with MCP_AUTH=jwt, a JWT verified like an MCP call's token logs in to the
// console when it carries the role claim; its scope and actions come from that claim.

const SECRET = 'console-jwt-secret-0123456789abcdef0123';
const ISSUER = 'https://idp.example.com/realms/ops';
const AUDIENCE = 'https://tasks.example.com/mcp';

function configFrom(env: Record<string, string>): GatewayConfig {
  const parsed = parseEnv({
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
    REDIS_URL: 'redis://127.0.0.1:6379',
    REQUEST_STATE_SECRET: 's'.repeat(32),
    MCP_AUTH: 'jwt',
    MCP_JWT_SECRET: SECRET,
    MCP_JWT_ISSUER: ISSUER,
    MCP_JWT_AUDIENCE: AUDIENCE,
    ...env,
  });
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.config;
}

const config = configFrom({ MCP_CONSOLE_ROLE_CLAIM: 'mcp_console' });
const { infra, gw } = useGatewayUnderTest('gateway_console_jwt', () => ({
  console: consoleFromConfig(config),
}));

async function jwt(
  claims: Record<string, unknown>,
  { secret = SECRET, audience = AUDIENCE, expires = '5m' } = {},
): Promise<string> {
  return new SignJWT({ sub: 'olga', tenant: 'acme', ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(expires)
    .sign(new TextEncoder().encode(secret));
}

function newTask(owner: TaskOwner): NewTask {
  return {
    id: newTaskId(),
    owner,
    operation: { method: 'tools/call', toolName: 'jwt_console_tool', arguments: {} },
    ttlMs: 600_000,
    pollIntervalMs: 1000,
    statusMessage: null,
  };
}

async function loginWith(token: string): Promise<Response> {
  return gw.app.request('/console/login', { method: 'POST', body: new URLSearchParams({ token }) });
}

async function sessionOf(token: string): Promise<{ cookie: string; csrf: string }> {
  const response = await loginWith(token);
  expect(response.status).toBe(303);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const page = await (await gw.app.request('/console', { headers: { cookie } })).text();
  return { cookie, csrf: /name="csrf-token" content="([^"]+)"/.exec(page)?.[1] ?? '' };
}

describe('console login with a JWT role claim (MCP_AUTH=jwt, MCP_CONSOLE_ROLE_CLAIM)', () => {
  it('is on only when MCP_CONSOLE_ROLE_CLAIM is set, and only with MCP_AUTH=jwt', () => {
    expect(consoleFromConfig(configFrom({}))).toBeUndefined();
    expect(consoleFromConfig(config)?.jwtLogin?.roleClaim).toBe('mcp_console');
    expect(
      parseEnv({
        DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
        REDIS_URL: 'redis://127.0.0.1:6379',
        REQUEST_STATE_SECRET: 's'.repeat(32),
        MCP_AUTH: 'none',
        MCP_CONSOLE_ROLE_CLAIM: 'mcp_console',
      }),
    ).toEqual({
      ok: false,
      problems: [
        'MCP_CONSOLE_ROLE_CLAIM: only with MCP_AUTH=jwt (it names a claim of the JWTs that MCP_AUTH=jwt verifies)',
      ],
    });
  });

  it('logs in a tenant operator from the claim, sees that tenant only, read-only', async () => {
    const mine = await createTask(infra.db, newTask({ tenant: 'acme', principal: 'a' }));
    const theirs = await createTask(infra.db, newTask({ tenant: 'globex', principal: 'g' }));
    const response = await loginWith(await jwt({ mcp_console: 'acme' }));
    expect(response.status).toBe(303);
    const setCookie = response.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^mcp_console=j1\./);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    // The cookie lives no longer than the token (5 minutes here), not the 12-hour session.
    expect(Number(/Max-Age=(\d+)/.exec(setCookie)?.[1])).toBeLessThanOrEqual(300);
    const cookie = setCookie.split(';')[0] ?? '';
    const list = await (
      await gw.app.request('/console?tool=jwt_console_tool', { headers: { cookie } })
    ).text();
    expect(list).toContain(`data-id="${mine.task.id}"`);
    expect(list).not.toContain(theirs.task.id);
    expect(
      (await gw.app.request(`/console/tasks/${theirs.task.id}`, { headers: { cookie } })).status,
    ).toBe(404);
    const page = await (await gw.app.request('/console', { headers: { cookie } })).text();
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(page)?.[1] ?? '';
    const refused = await gw.app.request(`/console/tasks/${mine.task.id}/cancel`, {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ _csrf: csrf }),
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('read-only');
  });

  it('lets a "*:actions" claim act on every tenant and audits the JWT subject', async () => {
    const { task } = await createTask(infra.db, newTask({ tenant: 'globex', principal: 'g' }));
    const { cookie, csrf } = await sessionOf(
      await jwt({ sub: 'root-op', mcp_console: '*:actions' }),
    );
    const response = await gw.app.request(`/console/tasks/${task.id}/cancel`, {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ _csrf: csrf }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('Cancel requested.');
    const last = await infra.db
      .selectFrom('task_events')
      .select(['kind', 'actor'])
      .where('task_id', '=', task.id)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(last).toEqual({ kind: 'console_cancel', actor: 'console:*:jwt:root-op' });
  });

  it('refuses a JWT without the claim, with a bad claim, or that fails verification', async () => {
    const cases: [string, number, string][] = [
      [
        await jwt({}),
        401,
        'That JWT has no &quot;mcp_console&quot; claim: it does not grant console access.',
      ],
      [
        await jwt({ mcp_console: 'acme:write' }),
        401,
        'That JWT&#39;s &quot;mcp_console&quot; claim must be &quot;tenant&quot;, &quot;*&quot;, or either with &quot;:actions&quot; appended.',
      ],
      [
        await jwt({ mcp_console: '*' }, { audience: 'https://other.example.com' }),
        401,
        'That JWT is not valid for this server (signature, issuer, audience, type or expiry).',
      ],
      [
        await jwt({ mcp_console: '*' }, { secret: 'another-secret-0123456789abcdef01234' }),
        401,
        'That JWT is not valid for this server (signature, issuer, audience, type or expiry).',
      ],
      [
        'not-a-console-token-nor-jwt',
        401,
        'That token is neither an operator token of this console nor a JWT with the &quot;mcp_console&quot; claim.',
      ],
    ];
    for (const [token, status, message] of cases) {
      const response = await loginWith(token);
      expect(response.status).toBe(status);
      expect(response.headers.get('set-cookie')).toBeNull();
      expect(await response.text()).toContain(message);
    }
  });

  it('ends the session when the JWT expires (the cookie is checked again on every request)', async () => {
    const token = await jwt({ mcp_console: 'acme' }, { expires: '1s' });
    const { cookie } = await sessionOf(token);
    expect((await gw.app.request('/console', { headers: { cookie } })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const after = await gw.app.request('/console', { headers: { cookie } });
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/console/login');
  });

  it('serves the history API to a JWT with the claim as a bearer token, and says why not otherwise', async () => {
    const { task } = await createTask(infra.db, newTask({ tenant: 'acme', principal: 'a' }));
    const ok = await gw.app.request(`/console/api/tasks/${task.id}/history`, {
      headers: { authorization: `Bearer ${await jwt({ mcp_console: 'acme' })}` },
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { taskId: string }).taskId).toBe(task.id);
    const refused = await gw.app.request(`/console/api/tasks/${task.id}/history`, {
      headers: { authorization: `Bearer ${await jwt({})}` },
    });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({
      error: 'unauthorized',
      message: 'That JWT has no "mcp_console" claim: it does not grant console access.',
    });
  });
});
