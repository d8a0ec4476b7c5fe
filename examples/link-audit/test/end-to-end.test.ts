import { startToolStack, type JsonRecord, type ToolStack } from '@mcp-tasks/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CONFIRM_KEY } from '../src/index.js';
import { startTestSite, type TestSite } from './site.js';

/**
 * audit_links through the real product: a gateway process and worker processes (loading this
 * package through MCP_TOOL_MODULES, as a deployment does), Postgres, Redis, HTTP all the way.
 */
let stack: ToolStack;
let site: TestSite;

beforeAll(async () => {
  stack = await startToolStack({
    label: 'link_audit_e2e',
    toolModules: ['./examples/link-audit/src/index.ts'],
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});
beforeEach(async () => {
  site = await startTestSite();
});
afterEach(async () => {
  await site.close();
});

const origin = () => site.url.slice(0, -1);
const accept = { action: 'accept', content: { confirm: true } };

/** Creates an audit over HTTP and waits until it asks for confirmation. */
async function createParkedAudit(): Promise<string> {
  const created = await stack.callTool('audit_links', { url: site.url });
  expect(created).toMatchObject({ resultType: 'task', status: 'working' });
  const taskId = created.taskId as string;
  const parked = await stack.waitForTask(taskId, (t) => t.status !== 'working');
  expect(parked).toMatchObject({
    status: 'input_required',
    statusMessage: 'Found 5 pages: waiting for confirmation',
    inputRequests: {
      [CONFIRM_KEY]: {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: `Found 5 pages on ${new URL(site.url).host}. Check them all?`,
        },
      },
    },
  });
  return taskId;
}

function expectFullAudit(done: JsonRecord): void {
  expect(done).toMatchObject({
    status: 'completed',
    statusMessage: 'Checked 5 pages: 1 broken',
    result: {
      resultType: 'complete',
      structuredContent: {
        url: site.url,
        checked: 5,
        broken: [{ url: `${origin()}/missing`, problem: 'HTTP 404' }],
      },
    },
  });
  const pages = (done.result as { structuredContent: { pages: { url: string }[] } })
    .structuredContent.pages;
  expect(pages.map((page) => page.url)).toEqual([
    site.url,
    `${origin()}/a`,
    `${origin()}/b`,
    `${origin()}/c`,
    `${origin()}/missing`,
  ]);
}

describe('audit_links end to end (gateway + worker processes, loaded from MCP_TOOL_MODULES)', () => {
  it('is listed by the gateway beside the built-in packs', async () => {
    const listed = await stack.rpc('tools/list', {});
    const names = (listed.result?.tools as { name: string }[]).map((tool) => tool.name);
    expect(names).toEqual(['audit_links', 'generate_report']);
  });

  it('is created, asks for confirmation, takes the answer and completes', async () => {
    const taskId = await createParkedAudit();
    const ack = await stack.answer(taskId, { [CONFIRM_KEY]: accept });
    expect(ack.resultType).toBe('complete');
    expectFullAudit(await stack.waitForTask(taskId));
    expect(site.requests.map((r) => r.key)).toEqual([
      `${taskId}:discover`,
      ...[0, 1, 2, 3, 4].map((i) => `${taskId}:page:${i}`),
    ]);
  });

  it('is cancelled mid-step: the page fetch in flight is aborted', async () => {
    const taskId = await createParkedAudit();
    site.hold('/b');
    await stack.answer(taskId, { [CONFIRM_KEY]: accept });
    await site.held('/b');
    await stack.cancel(taskId);
    const done = await stack.waitForTask(taskId);
    expect(done).toMatchObject({ status: 'cancelled' });
    expect(done).not.toHaveProperty('result');
    await expect
      .poll(() => site.requests.find((r) => r.path === '/b'), { timeout: 10_000 })
      .toMatchObject({ aborted: true });
    expect(site.hits('/c')).toBe(0);
  });

  it('survives kill -9 mid-step: another worker resumes from the checkpoint', async () => {
    const taskId = await createParkedAudit();
    site.hold('/b');
    await stack.answer(taskId, { [CONFIRM_KEY]: accept });
    await site.held('/b');
    // Pages 0 and 1 are checkpointed; the worker is inside the step for page 2.
    expect(await stack.getTask(taskId)).toMatchObject({
      status: 'working',
      statusMessage: 'Checked 2 of 5 pages',
    });
    const [victim] = stack.workers.filter((w) => w.child.exitCode === null);
    victim!.kill('SIGKILL');
    await victim!.exited;
    await stack.startWorker();

    expectFullAudit(await stack.waitForTask(taskId, undefined, 60_000));
    // Resumed, not restarted: finished pages were not fetched again; the interrupted one was,
    // under the same idempotency key.
    expect(site.hits('/')).toBe(2);
    expect(site.hits('/a')).toBe(1);
    expect(site.requests.filter((r) => r.path === '/b').map((r) => r.key)).toEqual([
      `${taskId}:page:2`,
      `${taskId}:page:2`,
    ]);
  });
});
