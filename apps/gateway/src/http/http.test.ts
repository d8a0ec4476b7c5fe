import { describe, expect, it } from 'vitest';
import { HttpProtocolError } from '../errors.js';
import { assertAcceptsJsonOrSse, assertJsonContentType } from './content-negotiation.js';
import { assertOriginAllowed } from './origin.js';
import { parseJsonBody, readBodyWithLimit } from './read-body.js';

function statusOf(run: () => unknown): number | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof HttpProtocolError ? error.status : -1;
  }
}

describe('origin check', () => {
  it('allows requests without Origin and loopback origins when no allow-list is set', () => {
    expect(statusOf(() => assertOriginAllowed(null, undefined))).toBeUndefined();
    expect(statusOf(() => assertOriginAllowed('http://localhost:3000', undefined))).toBeUndefined();
    expect(statusOf(() => assertOriginAllowed('http://127.0.0.1', undefined))).toBeUndefined();
    expect(statusOf(() => assertOriginAllowed('http://[::1]:8080', undefined))).toBeUndefined();
    expect(statusOf(() => assertOriginAllowed('https://evil.example', undefined))).toBe(403);
    expect(statusOf(() => assertOriginAllowed('http://localhost.evil.example', undefined))).toBe(
      403,
    );
  });

  it('allows exactly the listed origins when an allow-list is set', () => {
    const list = ['https://app.example'];
    expect(statusOf(() => assertOriginAllowed('https://app.example', list))).toBeUndefined();
    expect(statusOf(() => assertOriginAllowed('http://localhost:3000', list))).toBe(403);
    expect(statusOf(() => assertOriginAllowed('https://evil.example', '*'))).toBeUndefined();
  });
});

describe('content negotiation', () => {
  it('accepts application/json bodies with a charset and nothing else', () => {
    expect(
      statusOf(() => assertJsonContentType('application/json; charset=utf-8')),
    ).toBeUndefined();
    expect(statusOf(() => assertJsonContentType('text/plain'))).toBe(415);
    expect(statusOf(() => assertJsonContentType(null))).toBe(415);
  });

  it('requires an Accept that allows JSON or SSE', () => {
    expect(
      statusOf(() => assertAcceptsJsonOrSse('application/json, text/event-stream')),
    ).toBeUndefined();
    expect(statusOf(() => assertAcceptsJsonOrSse('text/event-stream'))).toBeUndefined();
    expect(statusOf(() => assertAcceptsJsonOrSse('*/*'))).toBeUndefined();
    expect(statusOf(() => assertAcceptsJsonOrSse(null))).toBeUndefined();
    expect(statusOf(() => assertAcceptsJsonOrSse('text/html'))).toBe(406);
    expect(statusOf(() => assertAcceptsJsonOrSse('application/json;q=0'))).toBe(406);
  });
});

describe('body reading', () => {
  it('refuses a body over the limit even without Content-Length', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(600));
        controller.enqueue(new Uint8Array(600));
        controller.close();
      },
    });
    const request = new Request('http://x/mcp', {
      method: 'POST',
      body,
      duplex: 'half',
    });
    await expect(readBodyWithLimit(request, 1000)).rejects.toMatchObject({ status: 413 });
  });

  it('reads a body within the limit', async () => {
    const request = new Request('http://x/mcp', { method: 'POST', body: '{"a":1}' });
    await expect(readBodyWithLimit(request, 1000)).resolves.toBe('{"a":1}');
  });

  const declaring = (length: string, body: string | Uint8Array) =>
    new Request('http://x/mcp', {
      method: 'POST',
      headers: { 'content-length': length },
      body,
    });

  it('reads a body whose declared length is within the limit whole', async () => {
    await expect(readBodyWithLimit(declaring('7', '{"a":1}'), 1000)).resolves.toBe('{"a":1}');
  });

  it('refuses a body longer than the limit even when its Content-Length says less', async () => {
    await expect(
      readBodyWithLimit(declaring('10', new Uint8Array(1200).fill(32)), 1000),
    ).rejects.toMatchObject({ status: 413 });
  });

  /** A body stream that records how many bytes were pulled from it. */
  function countedStream(chunks: number, chunkSize: number) {
    const pulled = { bytes: 0, cancelled: false };
    let left = chunks;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (left-- === 0) return controller.close();
        pulled.bytes += chunkSize;
        controller.enqueue(new Uint8Array(chunkSize).fill(32));
      },
      cancel() {
        pulled.cancelled = true;
      },
    });
    return { body, pulled };
  }

  it('reads and drops an oversized stream up to four times the limit, then stops', async () => {
    const { body, pulled } = countedStream(20, 500);
    const request = new Request('http://x/mcp', { method: 'POST', body, duplex: 'half' });
    await expect(readBodyWithLimit(request, 1000)).rejects.toMatchObject({ status: 413 });
    expect(pulled).toEqual({ bytes: 4000, cancelled: true });
  });

  it('answers a declared length beyond four times the limit without reading the body', async () => {
    const { body, pulled } = countedStream(20, 500);
    const request = new Request('http://x/mcp', {
      method: 'POST',
      headers: { 'content-length': '4001' },
      body,
      duplex: 'half',
    });
    await expect(readBodyWithLimit(request, 1000)).rejects.toMatchObject({ status: 413 });
    expect(pulled.bytes).toBeLessThanOrEqual(500);
  });

  it('refuses a declared length over the limit (the body read and dropped first)', async () => {
    await expect(readBodyWithLimit(declaring('1001', '{}'), 1000)).rejects.toMatchObject({
      status: 413,
      message: 'Request body exceeds 1000 bytes',
    });
  });

  it('answers -32700 for a body that is not UTF-8, with or without a declared length', async () => {
    const invalid = new Uint8Array([0x7b, 0xff, 0x7d]);
    const notUtf8 = { code: -32700, message: 'Parse error: the body is not valid UTF-8' };
    await expect(readBodyWithLimit(declaring('3', invalid), 1000)).rejects.toMatchObject(notUtf8);
    await expect(
      readBodyWithLimit(new Request('http://x/mcp', { method: 'POST', body: invalid }), 1000),
    ).rejects.toMatchObject(notUtf8);
  });

  it('answers -32700 for invalid or empty JSON', () => {
    expect(() => parseJsonBody('{"a":1,}')).toThrow(
      expect.objectContaining({ code: -32700 }) as Error,
    );
    expect(() => parseJsonBody('  ')).toThrow(expect.objectContaining({ code: -32700 }) as Error);
    expect(parseJsonBody('[1]')).toEqual([1]);
  });
});
