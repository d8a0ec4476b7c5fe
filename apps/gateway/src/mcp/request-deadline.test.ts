import { describe, expect, it } from 'vitest';
import { createRequestDeadline } from './request-deadline.js';

const never = new Promise<never>(() => undefined);

describe('createRequestDeadline', () => {
  it('rejects with 504 and aborts its signal when the budget runs out', async () => {
    const deadline = createRequestDeadline(new AbortController().signal, 10);
    await expect(deadline.run(never)).rejects.toMatchObject({
      status: 504,
      code: -32603,
      message: 'Request timed out after 10 ms',
    });
    expect(deadline.signal.aborted).toBe(true);
    expect(() => deadline.commit()).toThrow('Request timed out after 10 ms');
  });

  it('lets committed work finish past the budget', async () => {
    const deadline = createRequestDeadline(new AbortController().signal, 10);
    deadline.commit();
    const late = new Promise((resolve) => setTimeout(() => resolve('handle'), 50));
    await expect(deadline.run(late)).resolves.toBe('handle');
    expect(deadline.signal.aborted).toBe(false);
  });

  it('aborts its signal when the client goes away', () => {
    const client = new AbortController();
    const deadline = createRequestDeadline(client.signal, undefined);
    client.abort();
    expect(deadline.signal.aborted).toBe(true);
    expect(() => deadline.commit()).toThrow();
  });
});
