import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER, accept, createHarness, isTerminal, type Harness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('worker_report');
  await h.startWorker();
  await h.startWorker();
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('generate_report across worker processes', () => {
  it('runs a small report through approval to a completed markdown result', async () => {
    const created = await h.createTask('generate_report', { size: 'small' });
    expect(created.status).toBe('working');
    expect(created.statusMessage).toMatch(/outline/i);

    const parked = await h.waitFor(created.id, (t) => t.status === 'input_required');
    expect(Object.keys(parked.inputRequests)).toEqual(['approve_outline']);
    expect(parked.inputRequests.approve_outline).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', requestedSchema: { required: ['approved'] } },
    });
    expect(parked.lease).toBeNull();

    await h.service.submitInputResponses(OWNER, created.id, {
      approve_outline: accept({ approved: true }),
    });
    const done = await h.waitFor(created.id, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({
      content: [{ type: 'text', text: expect.stringContaining('# Report (small)') as string }],
      structuredContent: { size: 'small', format: 'markdown', approved: true, sections: 2 },
    });
    expect(done.error).toBeNull();
    expect(done.lease).toBeNull();
  });

  it('keeps a large report input_required after a partial answer, then renders the chosen format', async () => {
    const created = await h.createTask('generate_report', { size: 'large' });
    const parked = await h.waitFor(created.id, (t) => t.status === 'input_required');
    expect(Object.keys(parked.inputRequests).sort()).toEqual(['approve_outline', 'choose_format']);

    await h.service.submitInputResponses(OWNER, created.id, {
      approve_outline: accept({ approved: true }),
    });
    const partial = await h.task(created.id);
    expect(partial.status).toBe('input_required');
    expect(Object.keys(partial.inputRequests)).toEqual(['choose_format']);

    await h.service.submitInputResponses(OWNER, created.id, {
      choose_format: accept({ format: 'html' }),
    });
    const seen = new Set<string>();
    const done = await h.waitFor(created.id, (t) => {
      if (t.statusMessage !== null) seen.add(t.statusMessage);
      return isTerminal(t);
    });
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({
      structuredContent: { size: 'large', format: 'html', approved: true, sections: 6 },
    });
    expect((done.result?.content as { text: string }[])[0]!.text).toMatch(/^<article>/);
    expect([...seen].some((m) => /^Rendering section \d of 6$/.test(m))).toBe(true);
  });

  it('ends cancelled, saying why, when the outline is declined', async () => {
    const created = await h.createTask('generate_report', { size: 'medium' });
    await h.waitFor(created.id, (t) => t.status === 'input_required');
    await h.service.submitInputResponses(OWNER, created.id, {
      approve_outline: { action: 'decline' },
    });
    const done = await h.waitFor(created.id, isTerminal);
    expect(done.status).toBe('cancelled');
    expect(done.statusMessage).toMatch(/declined/);
    expect(done.result).toBeNull();
  });

  it('ends cancelled when approved is false', async () => {
    const created = await h.createTask('generate_report', { size: 'small' });
    await h.waitFor(created.id, (t) => t.status === 'input_required');
    await h.service.submitInputResponses(OWNER, created.id, {
      approve_outline: accept({ approved: false }),
    });
    const done = await h.waitFor(created.id, isTerminal);
    expect(done).toMatchObject({
      status: 'cancelled',
      statusMessage: expect.stringMatching(/not approved/) as string,
    });
  });
});
