import { ErrorCode, ProtocolError } from '@mcp-tasks/protocol';
import { HttpProtocolError } from '../errors.js';

function tooLarge(limit: number): HttpProtocolError {
  return new HttpProtocolError(413, {
    code: ErrorCode.InvalidRequest,
    message: `Request body exceeds ${limit} bytes`,
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ProtocolError(ErrorCode.ParseError, 'Parse error: the body is not valid UTF-8');
  }
}

const DECIMAL_LENGTH = /^\d+$/;

/**
 * How far past the limit a body is still read (and dropped) before the 413 is sent. A client that
 * writes its whole request before reading, as most do, only sees the answer if we read what it
 * sends: closing with its bytes unread makes the kernel reset the connection, which throws the
 * queued 413 away. Beyond this the answer goes out at once and the connection is closed.
 */
export const DISCARD_FACTOR = 4;

/**
 * Reads the body without ever buffering more than `limit` bytes. With a declared Content-Length
 * within the limit, the body is read whole: Node's HTTP parser delivers exactly that many bytes,
 * and on @hono/node-server `arrayBuffer()` reads them straight off the socket, where `body`
 * would first build a web Request and a ReadableStream (a large share of a poll's CPU). The size
 * is still checked after the read, for a Request built in-process whose header says less than
 * its body holds. Without a (well-formed) length, the stream is read while counting bytes.
 */
export async function readBodyWithLimit(request: Request, limit: number): Promise<string> {
  try {
    return await readBody(request, limit);
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    // Node's parser refused the body mid-way (a malformed chunk, a connection cut short) and has
    // answered 400 itself: the client's fault, logged as such rather than as an unexpected error.
    throw new HttpProtocolError(400, {
      code: ErrorCode.InvalidRequest,
      message:
        'Invalid Request: the request body could not be read (malformed chunked encoding, or the connection closed mid-body)',
    });
  }
}

async function readBody(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get('content-length');
  if (declared !== null && DECIMAL_LENGTH.test(declared)) {
    if (Number(declared) > limit) {
      if (Number(declared) <= limit * DISCARD_FACTOR) await discard(request.body);
      throw tooLarge(limit);
    }
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > limit) throw tooLarge(limit);
    return decodeUtf8(bytes);
  }
  if (request.body === null) return '';
  const reader = (request.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await discardFrom(reader, limit * DISCARD_FACTOR - size);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return decodeUtf8(Buffer.concat(chunks));
}

async function discard(body: ReadableStream<Uint8Array> | null): Promise<void> {
  if (body !== null) await discardFrom(body.getReader(), Number.POSITIVE_INFINITY);
}

/**
 * Reads and drops chunks until the stream ends or `allowance` bytes more have come. A read that
 * fails (the client gave up) ends it quietly: the answer is the 413 either way.
 */
async function discardFrom(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  allowance: number,
): Promise<void> {
  try {
    let left = allowance;
    while (left > 0) {
      const { done, value } = await reader.read();
      if (done) return;
      left -= value.byteLength;
    }
  } catch {
    return;
  }
  await reader.cancel().catch(() => undefined);
}

/** JSON.parse is already strict (no comments, no trailing commas); an empty body is a parse error too. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new ProtocolError(ErrorCode.ParseError, 'Parse error: empty body');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ProtocolError(
      ErrorCode.ParseError,
      `Parse error: ${error instanceof Error ? error.message : 'invalid JSON'}`,
    );
  }
}
