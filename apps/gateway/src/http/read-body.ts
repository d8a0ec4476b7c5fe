import { ErrorCode, ProtocolError } from '@mcp-tasks/protocol';
import { HttpProtocolError } from '../errors.js';

function tooLarge(limit: number): HttpProtocolError {
  return new HttpProtocolError(
    413,
    ErrorCode.InvalidRequest,
    `Request body exceeds ${limit} bytes`,
  );
}

/**
 * Reads the body while counting bytes, so an oversized or lying Content-Length cannot make the
 * process buffer more than `limit` bytes.
 */
export async function readBodyWithLimit(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  if (request.body === null) return '';
  const reader = (request.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new ProtocolError(ErrorCode.ParseError, 'Parse error: the body is not valid UTF-8');
  }
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
