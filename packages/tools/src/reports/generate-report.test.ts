import { ProtocolError } from '@mcp-tasks/tool-sdk';
import type { JsonValue } from '@mcp-tasks/tool-sdk';
import { describe, expect, it } from 'vitest';
import { context, runUntilStop } from '../../test/drive.js';
import { generateReport } from './generate-report.js';

const program = generateReport.task!;
const accept = (content: Record<string, JsonValue>) => ({ action: 'accept', content });

async function toApproval(size: 'small' | 'medium' | 'large') {
  const args = generateReport.arguments.parse({ size });
  const run = await runUntilStop(generateReport, args, program.start(args), context());
  return { args, run };
}

describe('generate_report', () => {
  it('is a task tool that rejects an unknown size', () => {
    expect(generateReport.mode).toBe('task');
    expect(generateReport.arguments.safeParse({ size: 'huge' }).success).toBe(false);
    expect(program.initialStatusMessage).toMatch(/outline/i);
  });

  it('asks only approve_outline for a small report, with the exact elicitation shape', async () => {
    const { run } = await toApproval('small');
    expect(run.outcomes).toHaveLength(1);
    expect(run.last.kind).toBe('input');
    if (run.last.kind !== 'input') return;
    expect(Object.keys(run.last.inputRequests)).toEqual(['approve_outline']);
    expect(run.last.inputRequests.approve_outline).toEqual({
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: expect.any(String) as string,
        requestedSchema: {
          type: 'object',
          properties: { approved: { type: 'boolean' } },
          required: ['approved'],
        },
      },
    });
    expect(run.last.statusMessage).toMatch(/outline/i);
  });

  it('asks approve_outline and choose_format in the same round for a large report', async () => {
    const { run } = await toApproval('large');
    if (run.last.kind !== 'input') throw new Error('expected input');
    expect(Object.keys(run.last.inputRequests).sort()).toEqual([
      'approve_outline',
      'choose_format',
    ]);
    expect(run.last.inputRequests.choose_format).toMatchObject({
      method: 'elicitation/create',
      params: {
        mode: 'form',
        requestedSchema: {
          type: 'object',
          properties: { format: { type: 'string', enum: ['markdown', 'html'] } },
        },
      },
    });
  });

  it.each([
    ['small', 2],
    ['medium', 4],
    ['large', 6],
  ] as const)(
    'renders a %s report in %i sections after approval, one step each',
    async (size, n) => {
      const { args, run } = await toApproval(size);
      const responses = {
        approve_outline: accept({ approved: true }),
        ...(size === 'large' ? { choose_format: accept({ format: 'html' }) } : {}),
      };
      const rest = await runUntilStop(generateReport, args, run.state, context(responses));
      // One step reads the answers, then one per section.
      expect(rest.outcomes).toHaveLength(1 + n);
      const messages = rest.outcomes
        .slice(0, n)
        .map((o) => (o.kind === 'continue' ? o.statusMessage : null));
      expect(messages).toEqual(
        Array.from({ length: n }, (_, i) => `Rendering section ${i + 1} of ${n}`),
      );
      expect(rest.last.kind).toBe('complete');
      if (rest.last.kind !== 'complete') return;
      const format = size === 'large' ? 'html' : 'markdown';
      expect(rest.last.statusMessage).toBe(`Report ready: ${n} sections, ${format}`);
      expect(rest.last.result.structuredContent).toEqual({
        size,
        format,
        approved: true,
        sections: n,
      });
      expect(rest.last.result.isError).toBeUndefined();
      const text = (rest.last.result.content[0] as { text: string }).text;
      expect(text.split(format === 'html' ? '<section>' : '\n## ').length - 1).toBe(n);
    },
  );

  it('resumes from a mid-render checkpoint without redoing earlier sections', async () => {
    const { args, run } = await toApproval('medium');
    const ctx = context({ approve_outline: accept({ approved: true }) });
    let state = run.state;
    for (let i = 0; i < 3; i += 1) {
      const outcome = await program.step(state, args, ctx);
      if (outcome.kind !== 'continue') throw new Error('expected continue');
      state = outcome.state;
    }
    // The approval step and two sections are done: a worker that picks up this checkpoint (JSON
    // round trip, as from Postgres) renders only the remaining two.
    expect((state as { rendered: string[] }).rendered).toHaveLength(2);
    const resumed = await runUntilStop(
      generateReport,
      args,
      JSON.parse(JSON.stringify(state)) as JsonValue,
      ctx,
    );
    expect(resumed.outcomes).toHaveLength(2);
    expect(resumed.last.kind).toBe('complete');
  });

  it.each([
    [{ approve_outline: { action: 'decline' } }, /declined/],
    [{ approve_outline: { action: 'cancel' } }, /cancelled/],
    [{ approve_outline: accept({ approved: false }) }, /not approved/],
  ])('ends cancelled with a reason when the answer is %j', async (responses, reason) => {
    const { args, run } = await toApproval('small');
    const outcome = await program.step(run.state, args, context(responses));
    expect(outcome.kind).toBe('cancel');
    if (outcome.kind === 'cancel') expect(outcome.statusMessage).toMatch(reason);
  });

  it('ends cancelled when a large report approves but declines the format question', async () => {
    const { args, run } = await toApproval('large');
    const outcome = await program.step(
      run.state,
      args,
      context({
        approve_outline: accept({ approved: true }),
        choose_format: { action: 'decline' },
      }),
    );
    expect(outcome).toEqual({
      kind: 'cancel',
      statusMessage: expect.stringMatching(/format/) as string,
    });
  });

  it('fails with -32602 on an accepted answer of the wrong shape', async () => {
    const { args, run } = await toApproval('small');
    const step = program.step(
      run.state,
      args,
      context({ approve_outline: accept({ approved: 'yes' }) }),
    );
    await expect(step).rejects.toBeInstanceOf(ProtocolError);
    await expect(step).rejects.toMatchObject({ code: -32602 });
  });

  it('treats an unreadable checkpoint as an internal error, not a protocol error', async () => {
    const args = generateReport.arguments.parse({ size: 'small' });
    const step = program.step({ phase: 'bogus' }, args, context());
    await expect(step).rejects.toThrow(/unreadable generate_report checkpoint/);
    await expect(step).rejects.not.toBeInstanceOf(ProtocolError);
  });

  it('stops a section at once when the signal aborts', async () => {
    const args = generateReport.arguments.parse({ size: 'small' });
    const controller = new AbortController();
    const ctx = { ...context({}, controller.signal), settings: { reportStepMs: 60_000 } };
    const step = program.step(program.start(args), args, ctx);
    controller.abort('cancel');
    await expect(step).rejects.toMatchObject({ name: 'AbortError' });
  });
});
