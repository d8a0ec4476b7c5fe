import { describe, expect, it } from 'vitest';
import { createSseStream } from './sse.js';

async function readSome(response: Response, until: (text: string) => boolean): Promise<string> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + 5000;
  while (!until(text) && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

describe('SSE stream', () => {
  it('writes messages as events and keep-alive comments while idle', async () => {
    const stream = createSseStream({ keepAliveMs: 10 });
    stream.send({ jsonrpc: '2.0', method: 'x', params: {} });
    const text = await readSome(stream.response, (t) => t.includes(': keep-alive'));
    expect(
      text.startsWith('event: message\ndata: {"jsonrpc":"2.0","method":"x","params":{}}\n\n'),
    ).toBe(true);
    expect(text).toContain(': keep-alive\n\n');
    expect(stream.response.headers.get('x-accel-buffering')).toBe('no');
  });

  it('runs close callbacks once when the client cancels, and refuses later writes', async () => {
    const stream = createSseStream({ keepAliveMs: 1000 });
    let closes = 0;
    stream.onClose(() => (closes += 1));
    await (stream.response.body as ReadableStream<Uint8Array>).cancel();
    expect(stream.closed).toBe(true);
    expect(stream.send({})).toBe(false);
    stream.close();
    expect(closes).toBe(1);
  });
});
