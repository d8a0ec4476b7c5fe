import {
  claimLease,
  completeTask,
  createTask,
  recordSweep,
  requestInput,
  type NewTask,
} from '@mcp-tasks/store';
import { newTaskId, type TaskOwner } from '@mcp-tasks/tasks';
import { describe, expect, it } from 'vitest';
import { parseConsoleTokens } from '../src/console/operators.js';
import { useGatewayUnderTest } from './support/harness.js';

const ROOT = 'console-root-token-0123456789';
const ACME_READER = 'console-acme-reader-0123456789';
const ACME_ACTOR = 'console-acme-actor-0123456789';
const { operators } = parseConsoleTokens(
  `${ROOT}:*:actions,${ACME_READER}:acme,${ACME_ACTOR}:acme:actions`,
);

const { infra, gw } = useGatewayUnderTest('gateway_console', () => ({ console: { operators } }));
const { gw: plain } = useGatewayUnderTest('gateway_console_off');

const acme: TaskOwner = { tenant: 'acme', principal: 'alice' };
const globex: TaskOwner = { tenant: 'globex', principal: 'gina' };

function newTask(owner: TaskOwner, toolName = 'console_tool'): NewTask {
  return {
    id: newTaskId(),
    owner,
    operation: { method: 'tools/call', toolName, arguments: { city: 'Oslo' } },
    ttlMs: 600_000,
    pollIntervalMs: 1000,
    statusMessage: null,
  };
}

/** Logs in with the token and returns the cookie and this session's CSRF token. */
async function login(token: string): Promise<{ cookie: string; csrf: string }> {
  const response = await gw.app.request('/console/login', {
    method: 'POST',
    body: new URLSearchParams({ token }),
  });
  expect(response.status).toBe(303);
  const setCookie = response.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(/HttpOnly/);
  expect(setCookie).toMatch(/SameSite=Strict/);
  expect(setCookie).toMatch(/Path=\/console/);
  const cookie = setCookie.split(';')[0] ?? '';
  const page = await (await gw.app.request('/console', { headers: { cookie } })).text();
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(page)?.[1] ?? '';
  return { cookie, csrf };
}

function post(path: string, cookie: string, form: Record<string, string>) {
  return gw.app.request(path, {
    method: 'POST',
    headers: { cookie },
    body: new URLSearchParams(form),
  });
}

describe('the operator console', () => {
  it('is absent (404) unless MCP_CONSOLE_TOKENS is configured', async () => {
    expect((await plain.app.request('/console')).status).toBe(404);
    expect((await plain.app.request('/console/login')).status).toBe(404);
  });

  it('sends a visitor without a session to the login page and refuses a wrong token', async () => {
    const response = await gw.app.request('/console');
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/console/login');
    const refused = await gw.app.request('/console/login', {
      method: 'POST',
      body: new URLSearchParams({ token: 'not-a-console-token-at-all' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a forged or altered session cookie', async () => {
    const { cookie } = await login(ACME_READER);
    const forged = cookie.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const response = await gw.app.request('/console', { headers: { cookie: forged } });
    expect(response.status).toBe(303);
  });

  it('shows one tenant only to a tenant operator, on the list, the task page and the API', async () => {
    const mine = await createTask(infra.db, newTask(acme));
    const theirs = await createTask(infra.db, newTask(globex));
    const { cookie } = await login(ACME_READER);
    const list = await (
      await gw.app.request('/console?tool=console_tool', { headers: { cookie } })
    ).text();
    expect(list).toContain(`data-id="${mine.task.id}"`);
    expect(list).not.toContain(theirs.task.id);
    const page = await gw.app.request(`/console/tasks/${theirs.task.id}`, { headers: { cookie } });
    expect(page.status).toBe(404);
    const api = await gw.app.request(`/console/api/tasks/${theirs.task.id}/history`, {
      headers: { authorization: `Bearer ${ACME_READER}` },
    });
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({
      error: 'not_found',
      message: `no task ${theirs.task.id} is visible to this operator`,
    });
    const rootList = await (
      await gw.app.request('/console?tool=console_tool', {
        headers: { cookie: (await login(ROOT)).cookie },
      })
    ).text();
    expect(rootList).toContain(theirs.task.id);
  });

  it('serves a task history as JSON to a bearer operator token', async () => {
    const { task } = await createTask(infra.db, newTask(acme));
    await claimLease(infra.db, task.id, 'worker-7', 30_000);
    const response = await gw.app.request(`/console/api/tasks/${task.id}/history`, {
      headers: { authorization: `Bearer ${ACME_READER}` },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      taskId: string;
      events: { kind: string; data: unknown }[];
    };
    expect(body.taskId).toBe(task.id);
    expect(body.events.map((event) => [event.kind, event.data])).toEqual([
      ['created', { tool: 'console_tool', status: 'working' }],
      ['claimed', { worker: 'worker-7', epoch: 1, attempt: 1 }],
      ['step_started', { step: 1, worker: 'worker-7' }],
    ]);
    const anonymous = await gw.app.request(`/console/api/tasks/${task.id}/history`);
    expect(anonymous.status).toBe(401);
  });

  it('refuses an action without this session’s CSRF token, and changes nothing', async () => {
    const { task } = await createTask(infra.db, newTask(acme));
    const { cookie } = await login(ACME_ACTOR);
    const other = await login(ROOT);
    const forms: Record<string, string>[] = [{}, { _csrf: other.csrf }, { _csrf: 'x' }];
    for (const form of forms) {
      const response = await post(`/console/tasks/${task.id}/cancel`, cookie, form);
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('CSRF token is missing or not this session');
    }
    const row = await infra.db
      .selectFrom('tasks')
      .select(['status', 'cancel_requested_at'])
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'working', cancel_requested_at: null });
  });

  it('refuses actions to a read-only token', async () => {
    const { task } = await createTask(infra.db, newTask(acme));
    const { cookie, csrf } = await login(ACME_READER);
    const response = await post(`/console/tasks/${task.id}/cancel`, cookie, { _csrf: csrf });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('read-only');
  });

  it('cancels a task and audits who did it; cannot cancel another tenant’s task', async () => {
    const { task } = await createTask(infra.db, newTask(acme));
    const theirs = await createTask(infra.db, newTask(globex));
    const { cookie, csrf } = await login(ACME_ACTOR);
    const response = await post(`/console/tasks/${task.id}/cancel`, cookie, { _csrf: csrf });
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('Cancel requested.');
    expect(page).toContain('console_cancel');
    const events = await infra.db
      .selectFrom('task_events')
      .select(['kind', 'actor'])
      .where('task_id', '=', task.id)
      .orderBy('id')
      .execute();
    expect(events.at(-1)).toEqual({ kind: 'console_cancel', actor: operators[2]?.actor });
    const refused = await post(`/console/tasks/${theirs.task.id}/cancel`, cookie, { _csrf: csrf });
    expect(refused.status).toBe(404);
    expect(await refused.text()).toContain('No task with this id is visible to this operator.');
    const row = await infra.db
      .selectFrom('tasks')
      .select('status')
      .where('id', '=', theirs.task.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('working');
  });

  it('previews a bulk cancel with its count, then cancels exactly the filter', async () => {
    const tool = `bulk_${Date.now()}`;
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await createTask(infra.db, newTask(acme, tool))).task.id);
    const theirs = await createTask(infra.db, newTask(globex, tool));
    const { cookie, csrf } = await login(ACME_ACTOR);
    const preview = await (
      await gw.app.request(`/console/bulk-cancel?tool=${tool}`, { headers: { cookie } })
    ).text();
    expect(preview).toMatch(/<strong>3<\/strong> unfinished tasks match/);
    const done = await post('/console/bulk-cancel', cookie, { _csrf: csrf, tool, expected: '3' });
    expect(await done.text()).toContain('Cancel requested for 3 tasks');
    const rows = await infra.db
      .selectFrom('tasks')
      .select(['id', 'status'])
      .where('tool_name', '=', tool)
      .execute();
    expect(Object.fromEntries(rows.map((row) => [row.id, row.status]))).toEqual({
      ...Object.fromEntries(ids.map((id) => [id, 'cancelled'])),
      [theirs.task.id]: 'working',
    });
  });

  it('answers an outstanding input request from the rendered form', async () => {
    const { task } = await createTask(infra.db, newTask(acme));
    const claim = await claimLease(infra.db, task.id, 'worker-1', 30_000);
    const request = {
      method: 'elicitation/create',
      params: {
        message: 'How many copies?',
        requestedSchema: {
          type: 'object',
          properties: { copies: { type: 'integer', title: 'Copies' } },
          required: ['copies'],
        },
      },
    };
    await requestInput(infra.db, claim!.fence, { copies: request }, null, 'waiting');
    const { cookie, csrf } = await login(ACME_ACTOR);
    const page = await (
      await gw.app.request(`/console/tasks/${task.id}`, { headers: { cookie } })
    ).text();
    expect(page).toContain('How many copies?');
    expect(page).toContain('name="field.copies"');
    const bad = await post(`/console/tasks/${task.id}/answer`, cookie, {
      _csrf: csrf,
      key: 'copies',
      action: 'accept',
      'field.copies': '2.5',
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('&quot;copies&quot; must be an integer');
    const good = await post(`/console/tasks/${task.id}/answer`, cookie, {
      _csrf: csrf,
      key: 'copies',
      action: 'accept',
      'field.copies': '3',
    });
    expect(await good.text()).toContain('Answered copies.');
    const row = await infra.db
      .selectFrom('tasks')
      .select(['status', 'input_responses'])
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      status: 'working',
      input_responses: { copies: { action: 'accept', content: { copies: 3 } } },
    });
  });

  it('refuses a filter it cannot read with a clear message', async () => {
    const { cookie } = await login(ROOT);
    const response = await gw.app.request('/console?status=done', { headers: { cookie } });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('status: unknown done');
  });

  it('shows the last sweep and its leader, the TTL and retention, table sizes and both charts', async () => {
    const { task } = await createTask(infra.db, newTask(acme));
    const claim = await claimLease(infra.db, task.id, 'worker-h', 30_000);
    await completeTask(infra.db, claim!.fence, { content: [] }, 'done');
    await recordSweep(infra.db, {
      workerId: 'worker-sweeps',
      durationMs: 12,
      expired: 1,
      redispatched: 2,
      deleted: 3,
      retentionMs: 7 * 86_400_000,
      intervalMs: 5_000,
    });
    const page = await (
      await gw.app.request('/console/health', { headers: { cookie: (await login(ROOT)).cookie } })
    ).text();
    expect(page).toMatch(/data-testid="sweeper-leader">worker-sweeps — \d+ workers? eligible</);
    expect(page).toMatch(
      /data-testid="last-sweep">\d+s ago \([^)]+\), every 5 s; took 12 ms: 1 expired, 2 woken, 3 deleted</,
    );
    expect(page).toContain('data-testid="task-ttl">1 h<');
    expect(page).toContain('data-testid="retention">7 d<');
    expect(page).toMatch(/task_events table<\/dt><dd>[\d.]+ [KM]iB</);
    const latency = JSON.parse(
      (/id="latency-chart" data-series="([^"]+)"/.exec(page)?.[1] ?? '{}').replaceAll(
        '&quot;',
        '"',
      ),
    ) as { minutes: number[]; p50: (number | null)[]; p95: (number | null)[] };
    expect(latency.minutes).toHaveLength(60);
    expect(latency.p50.at(-1)).toEqual(expect.any(Number));
    expect(page).toContain('id="throughput-chart"');
    // A tenant operator sees neither the cluster's sweeper nor its table sizes.
    const tenantPage = await (
      await gw.app.request('/console/health', {
        headers: { cookie: (await login(ACME_READER)).cookie },
      })
    ).text();
    expect(tenantPage).not.toContain('worker-sweeps');
    expect(tenantPage).toContain('id="latency-chart"');
  });
});
