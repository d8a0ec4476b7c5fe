import { ErrorCode } from '@mcp-tasks/protocol';
import { HttpProtocolError } from '../errors.js';

function mediaTypes(header: string): { type: string; q: number }[] {
  return header.split(',').map((part) => {
    const [type = '', ...paramList] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const qParam = paramList.find((param) => param.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    return { type, q: Number.isFinite(q) ? q : 0 };
  });
}

/** R22: a POST body is `application/json` (a charset parameter is fine, nothing else is). */
export function assertJsonContentType(contentType: string | null): void {
  if (contentType === 'application/json') return;
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new HttpProtocolError(415, {
      code: ErrorCode.InvalidRequest,
      message: 'Unsupported Media Type: POST /mcp takes Content-Type: application/json',
    });
  }
}

/** Accept headers clients send on every request, known to pass without parsing them. */
const COMMON_ACCEPT: ReadonlySet<string> = new Set([
  'application/json, text/event-stream',
  'application/json',
  'text/event-stream',
  '*/*',
]);

/**
 * R22: the client must accept JSON or SSE. A missing Accept means "anything" (RFC 9110); the
 * gateway answers plain requests with JSON and `subscriptions/listen` with SSE.
 */
export function assertAcceptsJsonOrSse(accept: string | null): void {
  if (accept === null || COMMON_ACCEPT.has(accept) || accept.trim() === '') return;
  const acceptable = mediaTypes(accept).some(
    ({ type, q }) =>
      q > 0 &&
      (type === 'application/json' ||
        type === 'text/event-stream' ||
        type === '*/*' ||
        type === 'application/*' ||
        type === 'text/*'),
  );
  if (!acceptable) {
    throw new HttpProtocolError(406, {
      code: ErrorCode.InvalidRequest,
      message: 'Not Acceptable: send Accept: application/json, text/event-stream',
    });
  }
}
