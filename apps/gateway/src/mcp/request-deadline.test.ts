import { describe, expect, it, vi } from 'vitest';
import { createRequestDeadline } from './request-deadline.js';

const never = new Promise<never>(() => undefined);

describe('createRequestDeadline', () => {
  it('rejects with 504 (Retry-After: 1) and aborts its signal when the budget runs out', async () => {
    const deadline = createRequestDeadline(() => new AbortController().signal, 10);
    await expect(deadline.run(never)).rejects.toMatchObject({
      status: 504,
      code: -32603,
      message: 'Request timed out after 10 ms',
      headers: { 'Retry-After': '1' },
    });
    expect(deadline.signal.aborted).toBe(true);
    expect(() => deadline.disarm()).toThrow('Request timed out after 10 ms');
  });

  it('lets work finish past the budget once disarmed', async () => {
    const deadline = createRequestDeadline(() => new AbortController().signal, 10);
    deadline.disarm();
    const late = new Promise((resolve) => setTimeout(() => resolve('handle'), 50));
    await expect(deadline.run(late)).resolves.toBe('handle');
    expect(deadline.signal.aborted).toBe(false);
  });

  it('aborts its signal when the client goes away', () => {
    const client = new AbortController();
    const deadline = createRequestDeadline(() => client.signal, undefined);
    client.abort();
    expect(deadline.signal.aborted).toBe(true);
    expect(() => deadline.disarm()).toThrow();
  });

  it('aborts its signal when the client goes away within a budget, too', () => {
    const client = new AbortController();
    const deadline = createRequestDeadline(() => client.signal, 60_000);
    expect(deadline.signal.aborted).toBe(false);
    client.abort();
    expect(deadline.signal.aborted).toBe(true);
    expect(() => deadline.disarm()).toThrow();
  });

  it('aborts a signal read before the budget runs out when it does', async () => {
    const deadline = createRequestDeadline(() => new AbortController().signal, 10);
    const { signal } = deadline;
    expect(signal.aborted).toBe(false);
    await expect(deadline.run(never)).rejects.toMatchObject({ status: 504 });
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toMatchObject({ status: 504 });
  });

  it('never reads the client signal when nobody asks for the deadline signal', async () => {
    let reads = 0;
    const deadline = createRequestDeadline(() => {
      reads += 1;
      return new AbortController().signal;
    }, 1_000);
    await expect(deadline.run(Promise.resolve('task'))).resolves.toBe('task');
    expect(reads).toBe(0);
  });

  it('disarms a live request without building the combined signal', () => {
    const any = vi.spyOn(AbortSignal, 'any');
    const deadline = createRequestDeadline(() => new AbortController().signal, 60_000);
    deadline.disarm();
    const calls = any.mock.calls.length;
    any.mockRestore();
    expect(calls).toBe(0);
  });

  it('refuses to disarm once the budget ran out, though no handler read the signal', async () => {
    const deadline = createRequestDeadline(() => new AbortController().signal, 10);
    await expect(deadline.run(never)).rejects.toMatchObject({ status: 504 });
    expect(() => deadline.disarm()).toThrow('Request timed out after 10 ms');
  });

  it('refuses to disarm once the client left, though no handler read the signal', () => {
    const client = new AbortController();
    const deadline = createRequestDeadline(() => client.signal, 60_000);
    client.abort(new Error('client went away'));
    expect(() => deadline.disarm()).toThrow('client went away');
  });
});
