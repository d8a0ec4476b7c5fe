import { EventSourceParserStream } from 'eventsource-parser/stream';
import { ConnectionError } from './errors.js';
import type { StreamMessage } from './wire.js';

/**
 * The JSON-RPC messages of an SSE body, in order. Keep-alive comments are dropped by the parser;
 * a body that ends or breaks mid-way ends the iteration with a `ConnectionError` only when it
 * broke (a clean end is a normal return).
 */
export async function* readSseMessages(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<StreamMessage> {
  const events = body
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .pipeThrough(new EventSourceParserStream())
    .getReader();
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof events.read>>;
      try {
        next = await events.read();
      } catch (error) {
        throw new ConnectionError('the event stream was cut', { cause: error });
      }
      if (next.done) return;
      if (next.value.data === '') continue;
      yield JSON.parse(next.value.data) as StreamMessage;
    }
  } finally {
    await events.cancel().catch(() => undefined);
  }
}
