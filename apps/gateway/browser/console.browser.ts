import { createDb, migrateToLatest, type Db } from '@mcp-tasks/store';
import {
  FAST_WORKER_ENV,
  createTestDatabase,
  createTestRedis,
  launchGateway,
  launchWorker,
  repoRoot,
  type LaunchedProcess,
  type TestDatabase,
  type TestRedis,
} from '@mcp-tasks/testing';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumMissingReason, launchChromium } from './chromium.js';

// The operator console in a real Chromium, against two real gateway processes and real workers
// on one database: what an operator sees, what a click changes, and who may do it. The same run
// writes the screenshots of docs/console.md.

const missing = chromiumMissingReason();
if (missing !== undefined) console.warn(`skipping the console browser tests: ${missing}`);

const ALICE = 'browser-alice-token-0123456789';
const GINA = 'browser-gina-token-0123456789';
const ROOT = 'browser-console-root-0123456789';
const ACME_OPERATOR = 'browser-console-acme-0123456789';
const SHOTS = join(repoRoot, 'docs', 'console');

interface Gateway {
  url: string;
  process: LaunchedProcess;
}

let database: TestDatabase;
let redis: TestRedis;
let db: Db;
let browser: Browser;
const gateways: Gateway[] = [];
const workers = new Map<string, LaunchedProcess>();
let shared: Record<string, string>;
/** Every origin any console page asked for: only the gateways' own (issue 27: no external fetch). */
const requested = new Set<string>();

async function startWorker(id: string): Promise<void> {
  const worker = await launchWorker({
    env: { ...shared, ...FAST_WORKER_ENV, REPORT_STEP_MS: '300' },
    id,
    readyTimeoutMs: 60_000,
  });
  workers.set(id, worker.process);
}

async function startGateway(): Promise<Gateway> {
  return await launchGateway({ env: shared, readyTimeoutMs: 60_000 });
}

let rpcId = 1;
/** tools/call through a gateway's /mcp as the token's owner; resolves with the task id. */
async function createTask(
  gateway: Gateway,
  token: string,
  name: string,
  args: object,
): Promise<string> {
  const response = await fetch(`${gateway.url}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: rpcId++,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {
            elicitation: {},
            extensions: { 'io.modelcontextprotocol/tasks': {} },
          },
        },
      },
    }),
  });
  const body = (await response.json()) as { result?: { taskId?: string }; error?: unknown };
  if (typeof body.result?.taskId !== 'string')
    throw new Error(`tools/call ${name} gave no task: ${JSON.stringify(body)}`);
  return body.result.taskId;
}

async function taskRow(taskId: string) {
  return await db
    .selectFrom('tasks')
    .select(['status', 'lease_owner', 'cancel_requested_at'])
    .where('id', '=', taskId)
    .executeTakeFirstOrThrow();
}

async function waitFor<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function loggedIn(
  gateway: Gateway,
  token: string,
  width = 1280,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  context.on('request', (request) => requested.add(new URL(request.url()).origin));
  const page = await context.newPage();
  await page.goto(`${gateway.url}/console`);
  expect(new URL(page.url()).pathname).toBe('/console/login');
  await page.fill('#token', token);
  await page.keyboard.press('Enter');
  await page.waitForURL(`${gateway.url}/console`);
  return { context, page };
}

/** Whether the element has the keyboard focus. */
function isFocused(locator: Locator): Promise<boolean> {
  return locator.evaluate(
    (element: { ownerDocument: { activeElement: unknown } }) =>
      element === element.ownerDocument.activeElement,
  );
}

/** What sticks out past the viewport's right edge (tag#id.class), for a failing width check. */
function overflowing(page: Page, width: number): Promise<string[]> {
  return page.evaluate(
    `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > ${width}).map((e) => e.tagName + (e.id ? '#' + e.id : '') + (typeof e.className === 'string' && e.className ? '.' + e.className.split(' ').join('.') : '')).slice(0, 12)`,
  );
}

function shot(page: Page, name: string): Promise<Buffer> {
  return page.screenshot({ path: join(SHOTS, name), fullPage: true });
}

describe.skipIf(missing !== undefined)('the operator console in Chromium', () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    database = await createTestDatabase('console_browser');
    redis = await createTestRedis('console_browser');
    db = createDb({ connectionString: database.connectionString });
    await migrateToLatest(db);
    shared = {
      DATABASE_URL: database.connectionString,
      REDIS_URL: redis.url,
      REDIS_PREFIX: redis.prefix,
      MCP_AUTH: 'tokens',
      MCP_TOKENS: `${ALICE}:acme:alice,${GINA}:globex:gina`,
      MCP_CONSOLE_TOKENS: `${ROOT}:*:actions,${ACME_OPERATOR}:acme:actions`,
      REQUEST_STATE_SECRET: 'console-browser-request-state-secret-0123456789',
      MCP_VISIBILITY_TIMEOUT_MS: '500',
      LOG_LEVEL: 'warn',
    };
    const [a, b] = await Promise.all([startGateway(), startGateway()]);
    gateways.push(a, b);
    await Promise.all([startWorker('browser-w1'), startWorker('browser-w2')]);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.allSettled(
      [...workers.values(), ...gateways.map((g) => g.process)].map((p) => p.stop()),
    );
    await redis?.deleteKeys();
    await db?.destroy();
    await database?.drop();
  });

  it('logs in with an operator token and refuses anything else', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 700 } });
    const page = await context.newPage();
    await page.goto(`${gateways[0]!.url}/console/login`);
    await shot(page, 'login.png');
    await page.fill('#token', ALICE);
    await page.click('button[type=submit]');
    await expect(page.locator('[role=alert]').textContent()).resolves.toContain(
      'not an operator token',
    );
    await page.fill('#token', ROOT);
    await page.click('button[type=submit]');
    await page.waitForURL(`${gateways[0]!.url}/console`);
    await expect(page.getByTestId('operator').textContent()).resolves.toBe('all tenants · actions');
    const cookies = await context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([
      ['mcp_console', true, 'Strict'],
    ]);
    await context.close();
  });

  it('updates the list live while tasks run through both gateways', async () => {
    const { context, page } = await loggedIn(gateways[0]!, ROOT);
    await page.goto(`${gateways[0]!.url}/console?tool=slow_compute`);
    await page.locator('#live-state', { hasText: 'live' }).waitFor();
    const viaB = await createTask(gateways[1]!, ALICE, 'slow_compute', {
      seconds: 2,
      label: 'via-b',
    });
    const viaA = await createTask(gateways[0]!, GINA, 'slow_compute', {
      seconds: 2,
      label: 'via-a',
    });
    for (const id of [viaA, viaB]) {
      await page.locator(`tr[data-id="${id}"]`).waitFor({ timeout: 15_000 });
      await page
        .locator(`tr[data-id="${id}"][data-status="completed"]`)
        .waitFor({ timeout: 30_000 });
    }
    // Never reloaded: the rows came over the live feed.
    expect(Number(await page.locator('#task-list').getAttribute('data-updates'))).toBeGreaterThan(
      1,
    );
    await shot(page, 'list.png');
    await context.close();
  });

  it('filters by status, tool and a search over the arguments', async () => {
    await createTask(gateways[0]!, ALICE, 'slow_compute', { seconds: 1, label: 'needle-filter' });
    const { context, page } = await loggedIn(gateways[1]!, ROOT);
    await page.fill('input[name=q]', 'needle-filter');
    await page.click('form.filters button[type=submit]');
    await page.waitForURL(/q=needle-filter/);
    const rows = page.locator('#task-list tbody tr');
    await expect(rows.count()).resolves.toBe(1);
    await page.goto(`${gateways[1]!.url}/console?status=failed&tool=slow_compute`);
    await expect(page.locator('#task-list tbody tr').count()).resolves.toBe(0);
    await expect(page.locator('#empty').textContent()).resolves.toBe('No task matches.');
    await context.close();
  });

  it('shows the takeover in the history of a task whose worker was killed mid-task', async () => {
    const taskId = await createTask(gateways[0]!, ALICE, 'slow_compute', {
      seconds: 6,
      label: 'victim',
    });
    const held = await waitFor(
      () => taskRow(taskId),
      (row) => row.lease_owner !== null,
    );
    const victim = workers.get(held.lease_owner!)!;
    victim.kill('SIGKILL');
    await victim.exited;
    workers.delete(held.lease_owner!);
    await waitFor(
      () => taskRow(taskId),
      (row) => row.status === 'completed',
      45_000,
    );
    const { context, page } = await loggedIn(gateways[1]!, ROOT);
    await page.goto(`${gateways[1]!.url}/console/tasks/${taskId}`);
    const kinds = await Promise.all(
      (await page.locator('#history tbody tr').all()).map((row) => row.getAttribute('data-kind')),
    );
    expect(kinds).toContain('lease_taken_over');
    expect(kinds.indexOf('lease_taken_over')).toBeLessThan(kinds.lastIndexOf('claimed'));
    expect(kinds.at(-1)).toBe('completed');
    // Each claim starts a step; the takeover's claim starts the step the dead worker was in.
    expect(kinds.indexOf('step_started')).toBe(kinds.indexOf('claimed') + 1);
    expect(kinds.lastIndexOf('step_started')).toBeGreaterThan(kinds.indexOf('lease_taken_over'));
    await expect(page.locator('tr[data-kind=lease_taken_over]').textContent()).resolves.toContain(
      held.lease_owner!,
    );
    await shot(page, 'task-history.png');
    // The history filter narrows the table to the matching events.
    await page.fill('#history-filter', 'taken_over');
    await expect(page.locator('#history tbody tr:visible').count()).resolves.toBe(1);
    await context.close();
    await startWorker('browser-w3');
  });

  it('cancels one task, audited with the operator', async () => {
    const taskId = await createTask(gateways[0]!, ALICE, 'slow_compute', {
      seconds: 60,
      label: 'cancel-me',
    });
    await waitFor(
      () => taskRow(taskId),
      (row) => row.lease_owner !== null,
    );
    const { context, page } = await loggedIn(gateways[0]!, ACME_OPERATOR);
    await page.goto(`${gateways[0]!.url}/console/tasks/${taskId}`);
    await page.click('text=Cancel this task');
    await expect(page.locator('.notice').textContent()).resolves.toBe('Cancel requested.');
    await waitFor(
      () => taskRow(taskId),
      (row) => row.status === 'cancelled',
    );
    await page.reload();
    await expect(page.locator('tr[data-kind=console_cancel]').textContent()).resolves.toContain(
      'console:acme:',
    );
    await context.close();
  });

  it('bulk-cancels by the current filter after a preview count', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        await createTask(gateways[1]!, ALICE, 'slow_compute', {
          seconds: 60,
          label: `bulk-batch-${i}`,
        }),
      );
    const { context, page } = await loggedIn(gateways[0]!, ROOT);
    await page.goto(`${gateways[0]!.url}/console?q=bulk-batch`);
    await page.getByTestId('bulk-cancel').click();
    await expect(page.getByTestId('preview-count').textContent()).resolves.toContain(
      '3 unfinished tasks match',
    );
    await shot(page, 'bulk-cancel.png');
    await page.click('button.danger');
    await expect(page.locator('[role=alert]').textContent()).resolves.toContain(
      'Cancel requested for 3 tasks',
    );
    for (const id of ids)
      await waitFor(
        () => taskRow(id),
        (row) => row.status === 'cancelled',
      );
    await context.close();
  });

  it('answers an outstanding input request from the rendered form', async () => {
    const taskId = await createTask(gateways[1]!, ALICE, 'generate_report', { size: 'large' });
    await waitFor(
      () => taskRow(taskId),
      (row) => row.status === 'input_required',
    );
    const { context, page } = await loggedIn(gateways[0]!, ACME_OPERATOR);
    await page.goto(`${gateways[0]!.url}/console/tasks/${taskId}`);
    await shot(page, 'task-input.png');
    const approve = page.locator('section[data-input-key=approve_outline]');
    await approve.locator('input[type=checkbox]').check();
    await approve.locator('button[value=accept]').click();
    await expect(page.locator('.notice').textContent()).resolves.toBe('Answered approve_outline.');
    const format = page.locator('section[data-input-key=choose_format]');
    await format.locator('select').selectOption('markdown');
    await format.locator('button[value=accept]').click();
    await expect(page.locator('.notice').textContent()).resolves.toBe('Answered choose_format.');
    await waitFor(
      () => taskRow(taskId),
      (row) => row.status === 'completed',
      45_000,
    );
    await context.close();
  });

  it('keeps a tenant operator inside its tenant', async () => {
    const theirs = await createTask(gateways[0]!, GINA, 'slow_compute', {
      seconds: 1,
      label: 'globex-only',
    });
    const { context, page } = await loggedIn(gateways[1]!, ACME_OPERATOR);
    await page.goto(`${gateways[1]!.url}/console?q=globex-only`);
    await expect(page.locator('#task-list tbody tr').count()).resolves.toBe(0);
    const response = await page.goto(`${gateways[1]!.url}/console/tasks/${theirs}`);
    expect(response?.status()).toBe(404);
    await expect(page.locator('h1').textContent()).resolves.toBe('No such task');
    await context.close();
  });

  it('refuses an action whose CSRF token is not this session’s, and changes nothing', async () => {
    const taskId = await createTask(gateways[0]!, ALICE, 'slow_compute', {
      seconds: 60,
      label: 'csrf',
    });
    const { context, page } = await loggedIn(gateways[1]!, ACME_OPERATOR);
    await page.goto(`${gateways[1]!.url}/console/tasks/${taskId}`);
    // The focus in the form keeps the live page from replacing it (with a fresh, valid token)
    // between the forgery and the click, as it keeps it for an operator filling it in.
    await page.focus('form[action$="/cancel"] button');
    await page.evaluate<void>(
      `document.querySelector('form[action$="/cancel"] input[name=_csrf]').value = 'forged'`,
    );
    // Read the page the POST answered, not the task page it replaces (the h1 of both exists).
    const [refusal] = await Promise.all([
      page.waitForResponse(
        (response) => response.request().method() === 'POST' && response.url().endsWith('/cancel'),
      ),
      page.click('text=Cancel this task'),
    ]);
    expect(refusal.status()).toBe(403);
    await page.waitForURL(/\/cancel$/);
    await expect(page.locator('h1').textContent()).resolves.toBe('Refused');
    expect((await taskRow(taskId)).cancel_requested_at).toBeNull();
    await context.close();
  });

  it('shows health, and stays readable and keyboard-usable at 390 px', async () => {
    const { context, page } = await loggedIn(gateways[0]!, ROOT);
    // The workers sweep every 300 ms (FAST_WORKER_ENV): the leader's last sweep is recorded.
    await waitFor(
      async () => {
        await page.goto(`${gateways[0]!.url}/console/health`);
        return await page.getByTestId('sweeper-leader').textContent();
      },
      (text) => /^browser-w\d/.test(text ?? ''),
    );
    await expect(page.getByTestId('last-sweep').textContent()).resolves.toMatch(/ago .* deleted$/);
    await page.locator('#throughput-chart .uplot').waitFor();
    await page.locator('#latency-chart .uplot').waitFor();
    await shot(page, 'health.png');
    await context.close();
    const narrow = await loggedIn(gateways[1]!, ROOT, 390);
    const taskId = await createTask(gateways[1]!, ALICE, 'slow_compute', { seconds: 1 });
    for (const path of ['/console', `/console/tasks/${taskId}`, '/console/health']) {
      await narrow.page.goto(`${gateways[1]!.url}${path}`);
      const overflow = await narrow.page.evaluate<number>('document.documentElement.scrollWidth');
      if (overflow > 390) expect([path, await overflowing(narrow.page, 390)]).toEqual([path, []]);
    }
    await narrow.page.goto(`${gateways[1]!.url}/console`);
    await narrow.page.keyboard.press('Tab');
    await expect(
      narrow.page.evaluate<string | undefined>('document.activeElement?.textContent'),
    ).resolves.toBe('Skip to content');
    await shot(narrow.page, 'list-390.png');
    await narrow.context.close();
  });

  it('is usable from the keyboard alone: filter, open a task, cancel it', async () => {
    const taskId = await createTask(gateways[0]!, ALICE, 'slow_compute', {
      seconds: 30,
      label: 'keyboard',
    });
    const { context, page } = await loggedIn(gateways[0]!, ROOT);
    await page.focus('input[name=tool]');
    await page.keyboard.type('slow_compute');
    await page.keyboard.press('Enter');
    await page.waitForURL(/tool=slow_compute/);
    // Tab to the task's link, open it with Enter, Tab to the cancel button, press it.
    const link = page.locator(`a[href="/console/tasks/${taskId}"]`);
    await link.waitFor();
    for (let i = 0; i < 200 && !(await isFocused(link)); i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${gateways[0]!.url}/console/tasks/${taskId}`);
    const cancel = page.locator('text=Cancel this task');
    for (let i = 0; i < 200 && !(await isFocused(cancel)); i++) await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await waitFor(
      () => taskRow(taskId),
      (row) => row.cancel_requested_at !== null || row.status === 'cancelled',
    );
    await context.close();
  });

  it('fetched nothing from any origin but the gateways’ own', () => {
    expect(requested.size).toBeGreaterThan(0);
    expect([...requested].filter((origin) => !gateways.some((g) => g.url === origin))).toEqual([]);
  });
});
