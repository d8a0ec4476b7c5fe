import { META_PROTOCOL_VERSION, Method } from './constants.js';
import { ErrorCode, ProtocolError } from './errors.js';
import { failed, passed, throwIfFailed, type Check } from './check.js';
import { isPlainObject } from './json.js';
import type { JsonRpcMessage } from './jsonrpc.js';

export const HEADER_PROTOCOL_VERSION = 'MCP-Protocol-Version';
export const HEADER_METHOD = 'Mcp-Method';
export const HEADER_NAME = 'Mcp-Name';

/** Case-insensitive header lookup, as `Headers#get` and Hono's `c.req.header` provide. */
export interface HeaderSource {
  get(name: string): string | null | undefined;
}

/** Which params field `Mcp-Name` mirrors for a method (HTTP §Standard Request Headers; EXT §Streamable HTTP: Routing Headers). */
export function mcpNameField(method: string): 'name' | 'uri' | 'taskId' | undefined {
  switch (method) {
    case Method.ToolsCall:
    case 'prompts/get':
      return 'name';
    case 'resources/read':
      return 'uri';
    case Method.TasksGet:
    case Method.TasksUpdate:
    case Method.TasksCancel:
      return 'taskId';
    default:
      return undefined;
  }
}

const BASE64_WORD = /^=\?base64\?(.*)\?=$/i;
const BASE64_PAYLOAD = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * A header value as compared with the body: surrounding whitespace removed (RFC 9110 §5.5) and
 * the `=?base64?…?=` form decoded as UTF-8. `undefined` when the encoded form is not valid.
 */
export function decodeHeaderValue(raw: string): string | undefined {
  const value = raw.trim();
  const match = BASE64_WORD.exec(value);
  if (!match) return value;
  const payload = match[1] ?? '';
  if (payload.length % 4 !== 0 || !BASE64_PAYLOAD.test(payload)) return undefined;
  try {
    const binary = atob(payload);
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

// Visible ASCII and inner spaces pass as they are; anything else would not survive an HTTP header.
const PLAIN_HEADER_VALUE = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;

/** The inverse of `decodeHeaderValue`: plain when safe, else the `=?base64?…?=` form. */
export function encodeHeaderValue(value: string): string {
  if (PLAIN_HEADER_VALUE.test(value) && !BASE64_WORD.test(value)) return value;
  const bytes = new TextEncoder().encode(value);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `=?base64?${btoa(binary)}?=`;
}

/**
 * The client side of R23: the routing headers that mirror a request's body, exactly what
 * `checkRoutingHeaders` compares (`Mcp-Name` only for methods that have a name field).
 */
export function buildRoutingHeaders(
  method: string,
  params: Record<string, unknown>,
  protocolVersion: string,
): Record<string, string> {
  const headers: Record<string, string> = {
    [HEADER_PROTOCOL_VERSION]: protocolVersion,
    [HEADER_METHOD]: method,
  };
  const field = mcpNameField(method);
  const name = field === undefined ? undefined : params[field];
  if (typeof name === 'string') headers[HEADER_NAME] = encodeHeaderValue(name);
  return headers;
}

function mismatch(message: string): { ok: false; error: ProtocolError } {
  return failed(new ProtocolError(ErrorCode.HeaderMismatch, message));
}

function read(
  headers: HeaderSource,
  name: string,
): { present: false } | { present: true; value: string | undefined } {
  const raw = headers.get(name);
  if (raw === null || raw === undefined) return { present: false };
  return { present: true, value: decodeHeaderValue(raw) };
}

/**
 * R23 for one POST: each routing header must be present and equal to the body field it mirrors,
 * else -32020. Run it before `validateRequestMeta` (so a header/body version disagreement is
 * -32020 even when the body version is unsupported, as CONF expects), and note that the version
 * is compared only when the body carries a string version: a missing or non-string one is left
 * to `validateRequestMeta`, which answers -32602 (R2). With header and body agreeing on an
 * unsupported version this check passes and R3 then answers -32022.
 *
 * Notifications carry no required `_meta`, so for them a header is checked only when sent.
 */
export function checkRoutingHeaders(headers: HeaderSource, message: JsonRpcMessage): Check {
  const isRequest = message.kind === 'request';
  const params = message.params;

  const version = read(headers, HEADER_PROTOCOL_VERSION);
  const meta = params?._meta;
  const bodyVersion = isPlainObject(meta) ? meta[META_PROTOCOL_VERSION] : undefined;
  if (!version.present) {
    if (isRequest) {
      return mismatch(
        `Missing ${HEADER_PROTOCOL_VERSION} header: it must equal params._meta["${META_PROTOCOL_VERSION}"]`,
      );
    }
  } else if (typeof bodyVersion === 'string' && version.value !== bodyVersion) {
    return mismatch(
      `${HEADER_PROTOCOL_VERSION} header ${JSON.stringify(version.value ?? '(invalid encoding)')} does not match params._meta["${META_PROTOCOL_VERSION}"] ${JSON.stringify(bodyVersion)}`,
    );
  }

  const method = read(headers, HEADER_METHOD);
  if (!method.present) {
    if (isRequest) {
      return mismatch(
        `Missing ${HEADER_METHOD} header: it must equal the body method ${JSON.stringify(message.method)}`,
      );
    }
  } else if (method.value !== message.method) {
    return mismatch(
      `${HEADER_METHOD} header ${JSON.stringify(method.value ?? '(invalid encoding)')} does not match the body method ${JSON.stringify(message.method)}`,
    );
  }

  const field = mcpNameField(message.method);
  if (field === undefined) return passed;
  // A missing or non-string body field is a params error (-32602) reported by the method's schema.
  const bodyName = params?.[field];
  if (typeof bodyName !== 'string') return passed;
  const name = read(headers, HEADER_NAME);
  if (!name.present) {
    return mismatch(
      `Missing ${HEADER_NAME} header: for ${message.method} it must equal params.${field}`,
    );
  }
  if (name.value === undefined) {
    return mismatch(`${HEADER_NAME} header is not valid =?base64?…?= encoding`);
  }
  if (name.value !== bodyName) {
    return mismatch(
      `${HEADER_NAME} header ${JSON.stringify(name.value)} does not match params.${field} ${JSON.stringify(bodyName)}`,
    );
  }
  return passed;
}

/** checkRoutingHeaders that throws its -32020 instead of returning it (the same order rules). */
export function assertRoutingHeaders(headers: HeaderSource, message: JsonRpcMessage): void {
  throwIfFailed(checkRoutingHeaders(headers, message));
}
