import { PROTOCOL_ERROR_JOB_ERROR } from '@mcp-tasks/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER, accept, createHarness, isTerminal, sleep, type Harness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await createHarness('worker_outcomes');
  await h.startWorker();
  await h.startWorker();
}, 60_000);

afterAll(async () => {
  await h?.close();
});

describe('how tasks end', () => {
  it('completes failing_job with isError true (a tool error is not a failed task)', async () => {
    const created = await h.createTask('failing_job', {});
    const done = await h.waitFor(created.id, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({
      content: [{ type: 'text', text: expect.any(String) as string }],
      isError: true,
    });
    expect(done.error).toBeNull();
  });

  it('fails protocol_error_job with its JSON-RPC error and a status message, without retrying', async () => {
    const created = await h.createTask('protocol_error_job', {});
    const done = await h.waitFor(created.id, isTerminal);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: -32603, message: PROTOCOL_ERROR_JOB_ERROR.message });
    expect(done.result).toBeNull();
    expect(done.statusMessage).toContain(PROTOCOL_ERROR_JOB_ERROR.message);
    expect(done.attempts).toBe(1);
  });

  it('completes slow_compute with non-empty content after checkpointing its slices', async () => {
    const created = await h.createTask('slow_compute', { seconds: 1.5, label: 'x' });
    const midway = await h.waitFor(created.id, (t) => t.checkpoint !== null || isTerminal(t));
    if (!isTerminal(midway)) expect(midway.checkpoint).toEqual({ elapsedMs: 1_000 });
    const done = await h.waitFor(created.id, isTerminal);
    expect(done.status).toBe('completed');
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'Computed x in 1.5 s' }] });
  });

  it('completes confirm_delete after accept with confirm true', async () => {
    const created = await h.createTask('confirm_delete', { filename: 'a.txt' });
    const parked = await h.waitFor(created.id, (t) => t.status === 'input_required');
    const [key] = Object.keys(parked.inputRequests);
    await h.service.submitInputResponses(OWNER, created.id, { [key!]: accept({ confirm: true }) });
    const done = await h.waitFor(created.id, isTerminal);
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Deleted a.txt' }] },
    });
  });

  it('keeps multi_input waiting until both keys are answered', async () => {
    const created = await h.createTask('multi_input', {});
    const parked = await h.waitFor(created.id, (t) => t.status === 'input_required');
    expect(Object.keys(parked.inputRequests)).toEqual(['first', 'second']);
    await h.service.submitInputResponses(OWNER, created.id, { first: accept({ name: 'A' }) });
    await sleep(300);
    const half = await h.task(created.id);
    expect(half.status).toBe('input_required');
    expect(Object.keys(half.inputRequests)).toEqual(['second']);
    await h.service.submitInputResponses(OWNER, created.id, { second: accept({ name: 'B' }) });
    const done = await h.waitFor(created.id, isTerminal);
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'Got A and B' }] });
  });

  it('completes test_tool_with_task with the gathered name in its text', async () => {
    const created = await h.createTask('test_tool_with_task', { name: 'Alice' });
    const done = await h.waitFor(created.id, isTerminal);
    expect(done.status).toBe('completed');
    expect((done.result?.content as { text: string }[])[0]!.text).toContain('Alice');
  });

  it('retries an unexpected error, then fails with -32603 after MAX_ATTEMPTS attempts', async () => {
    // A real failure mode, not a backdoor: a checkpoint this build cannot read (as after data
    // corruption) makes the tool's step throw a plain Error on every attempt.
    const task = await h.insertTask('generate_report', { size: 'small' });
    await h.query(
      `UPDATE tasks SET checkpoint = '{"phase":"from-the-future"}'::jsonb WHERE id = $1`,
      [task.id],
    );
    await h.queue.wake(task.id, 'created');
    const done = await h.waitFor(task.id, isTerminal);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: -32603, message: 'internal error after 3 attempts' });
    expect(done.statusMessage).toBe('Failed: internal error after 3 attempts');
    expect(done.attempts).toBe(3);
    const rows = await h.query<{ last_attempt_error: string | null }>(
      'SELECT last_attempt_error FROM tasks WHERE id = $1',
      [task.id],
    );
    expect(rows[0]?.last_attempt_error).toMatch(/unreadable generate_report checkpoint/);
  });

  it('fails a task whose worker keeps dying instead of running it again (crash loop)', async () => {
    // Two earlier attempts died with their worker (as a step that OOMs the process would), and
    // the last holder's lease has run out: the claim that takes it over is the third failure.
    const task = await h.insertTask('slow_compute', { seconds: 1 });
    await h.query(
      `UPDATE tasks SET failures = 2, attempts = 2, lease_epoch = 2, lease_owner = 'dead-worker',
         lease_expires_at = now() - interval '1 second' WHERE id = $1`,
      [task.id],
    );
    await h.queue.wake(task.id, 'created');
    const done = await h.waitFor(task.id, isTerminal);
    const message = "internal error after 3 attempts: the task's worker was lost";
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: -32603, message });
    expect(done.statusMessage).toBe(`Failed: ${message}`);
    expect(done.result).toBeNull();
    expect(done.checkpoint).toBeNull();
    expect(done.failures).toBe(3);
  });

  it('fails a task whose stored arguments the tool refuses with -32602', async () => {
    const created = await h.createTask('generate_report', { size: 'gigantic' });
    const done = await h.waitFor(created.id, isTerminal);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({
      code: -32602,
      message: 'invalid arguments for generate_report',
    });
  });

  it('fails a task after its ttl expires (sweeper), and its worker stops writing', async () => {
    const created = await h.createTask('slow_compute', { seconds: 30 }, 1_500);
    const done = await h.waitFor(created.id, isTerminal, 15_000);
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: -32603, message: 'task expired' });
    await sleep(1_500);
    expect((await h.task(created.id)).status).toBe('failed');
  });
});
