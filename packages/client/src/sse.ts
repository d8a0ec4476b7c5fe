import { EventSourceParserStream } from 'eventsource-parser/stream';
import { ConnectionError } from './errors.js';
import type { StreamMessage } from './wire.js';

/** Three of mcp-tasks' keep-alive comments (one every 15 s by default) missed in a row. */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 45_000;

export interface SseReadOptions {
  /**
   * A stream that brings no bytes at all (not even a keep-alive comment) for this long is
   * presumed dead and ends with a `ConnectionError`; 0 waits forever.
   */
  idleTimeoutMs?: number;
}

/**
 * The JSON-RPC messages of an SSE body, in order. Keep-alive comments are dropped by the parser;
 * a body that ends or breaks mid-way ends the iteration with a `ConnectionError` only when it
 * broke (a clean end is a normal return). A silent body breaks too, after `idleTimeoutMs`: a
 * replica that vanished without closing the connection (power loss, a partition) sends no FIN,
 * and the socket would otherwise wait for undici's five-minute body timeout.
 */
export async function* readSseMessages(
  body: ReadableStream<Uint8Array>,
  options: SseReadOptions = {},
): AsyncGenerator<StreamMessage> {
  const watchdog = new IdleWatchdog(options.idleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS);
  const events = body
    .pipeThrough(watchdog.stream)
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .pipeThrough(new EventSourceParserStream())
    .getReader();
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof events.read>>;
      watchdog.reading();
      try {
        next = await events.read();
      } catch (error) {
        if (error instanceof ConnectionError) throw error;
        throw new ConnectionError('the event stream was cut', { cause: error });
      } finally {
        watchdog.stop();
      }
      if (next.done) return;
      if (next.value.data === '') continue;
      yield JSON.parse(next.value.data) as StreamMessage;
    }
  } finally {
    watchdog.stop();
    await events.cancel().catch(() => undefined);
  }
}

/**
 * Passes bytes through and errors the stream when none came for `timeoutMs` while a read waited;
 * erroring it cancels the body, which releases the connection. The clock runs only while the
 * caller waits for an event: a caller busy with the last one (a person answering a prompt) leaves
 * events unread, the pipe fills, and keep-alives stop reaching this stage, which is not silence.
 */
class IdleWatchdog {
  readonly stream: TransformStream<Uint8Array, Uint8Array>;
  private controller: TransformStreamDefaultController<Uint8Array> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private waiting = false;

  constructor(private readonly timeoutMs: number) {
    this.stream = new TransformStream<Uint8Array, Uint8Array>({
      start: (controller) => {
        this.controller = controller;
      },
      transform: (chunk, controller) => {
        if (this.waiting) this.arm();
        controller.enqueue(chunk);
      },
      flush: () => this.stop(),
    });
  }

  /** A read is waiting: the clock starts, and every chunk restarts it. */
  reading(): void {
    this.waiting = true;
    this.arm();
  }

  /** The read returned (or the stream ended): the clock stops until the next read. */
  stop(): void {
    this.waiting = false;
    clearTimeout(this.timer);
  }

  private arm(): void {
    clearTimeout(this.timer);
    if (this.timeoutMs <= 0) return;
    this.timer = setTimeout(() => {
      this.controller?.error(
        new ConnectionError(
          `the event stream sent nothing, not even a keep-alive, for ${this.timeoutMs} ms; presumed dead`,
        ),
      );
    }, this.timeoutMs);
  }
}
