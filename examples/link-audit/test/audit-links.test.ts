import { ErrorCode, ProtocolError } from '@mcp-tasks/tool-sdk';
import { startToolTask } from '@mcp-tasks/tool-sdk/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONFIRM_KEY, auditLinks } from '../src/index.js';
import { startTestSite, type TestSite } from './site.js';

/** The tool in-process through the SDK harness: no Postgres, no Redis, a real HTTP site. */
let site: TestSite;
beforeEach(async () => {
  site = await startTestSite();
});
afterEach(async () => {
  await site.close();
});

const accept = { action: 'accept', content: { confirm: true } };
const origin = () => site.url.slice(0, -1);

describe('audit_links in the harness', () => {
  it('discovers same-site pages, asks once, checks each page and reports the broken one', async () => {
    const run = startToolTask(auditLinks, { url: site.url });
    expect(await run.runUntilStop()).toBe('input_required');
    expect(run.statusMessage).toBe('Found 5 pages: waiting for confirmation');
    expect(run.inputRequests).toEqual({
      [CONFIRM_KEY]: {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: `Found 5 pages on ${new URL(site.url).host}. Check them all?`,
          requestedSchema: {
            type: 'object',
            properties: { confirm: { type: 'boolean', title: 'Check these pages' } },
            required: ['confirm'],
          },
        },
      },
    });

    run.answer({ [CONFIRM_KEY]: accept });
    expect(await run.runUntilStop()).toBe('completed');
    expect(run.statusMessage).toBe('Checked 5 pages: 1 broken');
    expect(run.result?.structuredContent).toEqual({
      url: site.url,
      checked: 5,
      broken: [{ url: `${origin()}/missing`, problem: 'HTTP 404' }],
      pages: [
        { url: site.url, status: 200, title: 'Home', words: 8 },
        { url: `${origin()}/a`, status: 200, title: 'Page A', words: 4 },
        { url: `${origin()}/b`, status: 200, title: 'Page B', words: 2 },
        { url: `${origin()}/c`, status: 200, title: 'Page C', words: 1 },
        { url: `${origin()}/missing`, status: 404, title: '', words: 0 },
      ],
    });
    expect(run.result?.isError).toBeUndefined();
    // One discovery, then one step per page, each with its own idempotency key.
    expect(site.requests.map((r) => r.key)).toEqual([
      `${run.taskId}:discover`,
      ...[0, 1, 2, 3, 4].map((i) => `${run.taskId}:page:${i}`),
    ]);
  });

  it('ends cancelled, without checking anything, when the user declines', async () => {
    const run = startToolTask(auditLinks, { url: site.url });
    await run.runUntilStop();
    run.answer({ [CONFIRM_KEY]: { action: 'decline' } });
    expect(await run.runUntilStop()).toBe('cancelled');
    expect(run.statusMessage).toBe('Audit not confirmed');
    expect(site.requests).toHaveLength(1);
  });

  it('fails with -32602 on an answer that is not an ElicitResult', async () => {
    const run = startToolTask(auditLinks, { url: site.url });
    await run.runUntilStop();
    run.answer({ [CONFIRM_KEY]: { confirm: 'yes' } });
    expect(await run.runUntilStop()).toBe('failed');
    expect(run.error).toEqual({
      code: ErrorCode.InvalidParams,
      message: `${CONFIRM_KEY}: expected an ElicitResult`,
    });
  });

  it('answers a broken start page as a tool error (isError), not a failed task', async () => {
    const run = startToolTask(auditLinks, { url: `${site.url}missing` });
    expect(await run.runUntilStop()).toBe('completed');
    expect(run.result).toEqual({
      content: [{ type: 'text', text: `The start page ${site.url}missing is broken: HTTP 404` }],
      isError: true,
    });
  });

  it('refuses bad arguments with -32602 before any work', () => {
    expect(() => startToolTask(auditLinks, { url: 'ftp://x' })).toThrow(ProtocolError);
    expect(() => startToolTask(auditLinks, { url: site.url, maxPages: 0 })).toThrow(
      'invalid arguments for audit_links',
    );
    expect(site.requests).toHaveLength(0);
  });

  it('stops a page fetch in flight when the task is cancelled', async () => {
    const run = startToolTask(auditLinks, { url: site.url });
    await run.runUntilStop();
    run.answer({ [CONFIRM_KEY]: accept });
    await run.step(); // confirm → check
    await run.step(); // page 0
    site.hold('/a');
    const inFlight = run.step();
    await site.held('/a');
    run.cancel();
    await inFlight;
    expect(run.status).toBe('cancelled');
    // The checkpoint kept the page checked before the cancel.
    expect((run.checkpoint as { checked: unknown[] }).checked).toHaveLength(1);
    await expect.poll(() => site.requests.at(-1)).toMatchObject({ path: '/a', aborted: true });
  });

  it('runs a step again after a crash before its checkpoint, with the same idempotency key', async () => {
    const run = startToolTask(auditLinks, { url: site.url });
    await run.runUntilStop();
    run.answer({ [CONFIRM_KEY]: accept });
    await run.step(); // confirm → check
    await run.step(); // page 0 saved
    await run.stepAndCrash(); // page 1 fetched, then the worker died
    expect((run.checkpoint as { checked: unknown[] }).checked).toHaveLength(1);
    expect(await run.runUntilStop()).toBe('completed');
    expect(site.hits('/a')).toBe(2);
    const keys = site.requests.filter((r) => r.path === '/a').map((r) => r.key);
    expect(keys).toEqual([`${run.taskId}:page:1`, `${run.taskId}:page:1`]);
    expect(site.hits('/')).toBe(2); // discovery + page 0, never again
  });
});
