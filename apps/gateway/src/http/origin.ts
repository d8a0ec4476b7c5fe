import { ErrorCode } from '@mcp-tasks/protocol';
import { HttpProtocolError } from '../errors.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function isLoopbackOrigin(origin: string): boolean {
  if (!URL.canParse(origin)) return false;
  const url = new URL(origin);
  return (
    (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname)
  );
}

/**
 * R25 (DNS rebinding): a browser always sends Origin on a cross-origin POST, so a request without
 * one comes from a non-browser client and is allowed. With no allow-list configured only loopback
 * origins pass, which suits local development and nothing else; `*` disables the check.
 */
export function assertOriginAllowed(
  origin: string | null,
  allowed: readonly string[] | '*' | undefined,
): void {
  if (origin === null || allowed === '*') return;
  const ok = allowed === undefined ? isLoopbackOrigin(origin) : allowed.includes(origin);
  if (!ok) {
    throw new HttpProtocolError(403, {
      code: ErrorCode.InvalidRequest,
      message: 'Forbidden: Origin not allowed',
    });
  }
}
