/**
 * A server-sent-events response for one POST (R21, HTTP §Receiving Messages). Built on a plain ReadableStream
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

export interface SseOverflow {
  /** Bytes queued for a client that is not reading, beyond which the stream is dropped. */
  maxBufferedBytes: number;
  /** The last message, queued past the bound so the client learns why the stream ended. */
  lastMessage: () => unknown;
  onDropped?: () => void;
}

const encoder = new TextEncoder();

function sseEvent(message: unknown): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/** Closes a stream the client may have closed already. */
function closeQuietly(c: ReadableStreamDefaultController<Uint8Array> | undefined): void {
  try {
    c?.close();
  } catch {
    // already closed by the client
  }
}

/** Queues the overflow's last message past the bound, ends the stream, reports the drop. */
function dropSlowClient(
  c: ReadableStreamDefaultController<Uint8Array>,
  overflow: SseOverflow,
  finish: () => void,
): void {
  try {
    c.enqueue(encoder.encode(sseEvent(overflow.lastMessage())));
  } catch {
    // the client is gone already
  }
  finish();
  closeQuietly(c);
  overflow.onDropped?.();
}

export function createSseStream(options: {
  keepAliveMs: number;
  headers?: Record<string, string>;
  overflow?: SseOverflow;
}): SseStream {
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let closed = false;
  const closeCallbacks: (() => void)[] = [];

  const finish = (): void => {
    if (closed) return;
    closed = true;
    clearInterval(keepAlive);
    for (const callback of closeCallbacks.splice(0)) callback();
  };

  const overflow = options.overflow;

  const write = (text: string): boolean => {
    if (closed || controller === undefined) return false;
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      finish();
      return false;
    }
    // desiredSize = bound - bytes queued: below zero the client has stopped keeping up, and
    // holding more for it would let one slow reader grow this process without limit.
    if (overflow !== undefined && (controller.desiredSize ?? 0) < 0) {
      dropSlowClient(controller, overflow, finish);
      return false;
    }
    return true;
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      cancel() {
        finish();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: overflow?.maxBufferedBytes ?? 0 }),
  );

  // A comment line keeps idle connections from being cut by proxies and load balancers.
  const keepAlive = setInterval(() => write(': keep-alive\n\n'), options.keepAliveMs);
  keepAlive.unref();

  return new SseStreamHandle({
    response: new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...options.headers } }),
    send: (message) => write(sseEvent(message)),
    close: () => {
      if (closed) return;
      const c = controller;
      finish();
      closeQuietly(c);
    },
    onClose: (callback) => {
      if (closed) callback();
      else closeCallbacks.push(callback);
    },
    isClosed: () => closed,
  });
}

/** `closed` on a prototype, not a literal's own getter (see eslint.config.js). */
class SseStreamHandle implements SseStream {
  readonly response: Response;
  readonly send: SseStream['send'];
  readonly close: SseStream['close'];
  readonly onClose: SseStream['onClose'];
  readonly #isClosed: () => boolean;

  constructor(parts: Omit<SseStream, 'closed'> & { isClosed: () => boolean }) {
    this.response = parts.response;
    this.send = parts.send;
    this.close = parts.close;
    this.onClose = parts.onClose;
    this.#isClosed = parts.isClosed;
  }

  get closed(): boolean {
    return this.#isClosed();
  }
}
