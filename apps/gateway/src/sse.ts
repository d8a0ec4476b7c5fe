/**
 * A server-sent-events response for one POST (R21, HTTP §SSE). Built on a plain ReadableStream
 * so the stream's end is explicit: `close()` from our side, `onClose` when the client goes away.
 */
export interface SseStream {
  response: Response;
  /** Writes one JSON-RPC message as an event; false once the stream is closed. */
  send(message: unknown): boolean;
  close(): void;
  readonly closed: boolean;
  /** Runs once when the stream ends for any reason (client disconnect included). */
  onClose(callback: () => void): void;
}

export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  // Proxies must neither cache nor buffer a stream whose whole point is latency.
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
} as const;

export function createSseStream(options: {
  keepAliveMs: number;
  headers?: Record<string, string>;
}): SseStream {
  const encoder = new TextEncoder();
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let closed = false;
  const closeCallbacks: (() => void)[] = [];

  const finish = (): void => {
    if (closed) return;
    closed = true;
    clearInterval(keepAlive);
    for (const callback of closeCallbacks.splice(0)) callback();
  };

  const write = (text: string): boolean => {
    if (closed || controller === undefined) return false;
    try {
      controller.enqueue(encoder.encode(text));
      return true;
    } catch {
      finish();
      return false;
    }
  };

  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      finish();
    },
  });

  // A comment line keeps idle connections from being cut by proxies and load balancers.
  const keepAlive = setInterval(() => write(': keep-alive\n\n'), options.keepAliveMs);
  keepAlive.unref();

  return {
    response: new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...options.headers } }),
    send: (message) => write(`event: message\ndata: ${JSON.stringify(message)}\n\n`),
    close() {
      if (closed) return;
      const c = controller;
      finish();
      try {
        c?.close();
      } catch {
        // already closed by the client
      }
    },
    get closed() {
      return closed;
    },
    onClose(callback) {
      if (closed) callback();
      else closeCallbacks.push(callback);
    },
  };
}
