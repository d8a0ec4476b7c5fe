import { z } from 'zod';
import { ErrorCode, ProtocolError, type JsonRpcErrorObject } from './errors.js';
import { describeType, isPlainObject } from './json.js';

/** `null` is a legal id and still makes the message a request (R1). */
export type RequestId = string | number | null;
export const RequestIdSchema = z.union([z.string(), z.number().finite(), z.null()]);

export type Params = Record<string, unknown>;

export type JsonRpcMessage =
  | { kind: 'request'; id: RequestId; method: string; params: Params | undefined }
  | { kind: 'notification'; method: string; params: Params | undefined };

/** Wire schemas of the envelope; `parseJsonRpcMessage` is the entry point that gives good errors. */
export const JsonRpcErrorObjectSchema = z.looseObject({
  code: z.int(),
  message: z.string(),
  data: z.unknown().optional(),
});
/** A response has exactly one of `result` and `error` (JSON-RPC 2.0 §5): strict on that. */
export const JsonRpcResultResponseSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: RequestIdSchema,
  result: z.record(z.string(), z.unknown()),
});
export const JsonRpcErrorResponseSchema = z.strictObject({
  jsonrpc: z.literal('2.0'),
  id: RequestIdSchema,
  error: JsonRpcErrorObjectSchema,
});
export const JsonRpcResponseSchema = z.union([
  JsonRpcResultResponseSchema,
  JsonRpcErrorResponseSchema,
]);

export interface JsonRpcResultResponse<R = Record<string, unknown>> {
  jsonrpc: '2.0';
  id: RequestId;
  result: R;
}
export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: RequestId;
  error: JsonRpcErrorObject;
}
export interface JsonRpcNotification<P = Record<string, unknown>> {
  jsonrpc: '2.0';
  method: string;
  params: P;
}

function invalid(message: string): ProtocolError {
  return new ProtocolError(ErrorCode.InvalidRequest, message);
}

/**
 * Classifies one decoded JSON body as a request or a notification, or throws ProtocolError
 * -32600 naming what is wrong. A body that is not JSON at all is the caller's -32700.
 */
export function parseJsonRpcMessage(value: unknown): JsonRpcMessage {
  if (Array.isArray(value)) {
    throw invalid(
      'JSON-RPC batches are not supported in MCP 2026-07-28: send exactly one JSON-RPC object per request',
    );
  }
  if (!isPlainObject(value)) {
    throw invalid(`Invalid Request: expected a JSON-RPC object, received ${describeType(value)}`);
  }
  if (value.jsonrpc !== '2.0') {
    throw invalid(
      `Invalid Request: "jsonrpc" must be exactly "2.0", received ${JSON.stringify(value.jsonrpc) ?? 'nothing'}`,
    );
  }
  if (!('method' in value)) {
    throw invalid(
      'result' in value || 'error' in value
        ? 'Invalid Request: this server accepts requests and notifications only, not responses'
        : 'Invalid Request: "method" is missing',
    );
  }
  if (typeof value.method !== 'string') {
    throw invalid(
      `Invalid Request: "method" must be a string, received ${describeType(value.method)}`,
    );
  }
  const method = value.method;
  let params: Params | undefined;
  if ('params' in value && value.params !== undefined) {
    if (!isPlainObject(value.params)) {
      throw invalid(
        `Invalid Request: "params" must be an object when present, received ${describeType(value.params)}`,
      );
    }
    params = value.params;
  }
  if (!('id' in value)) return { kind: 'notification', method, params };
  const id = value.id;
  if (!(typeof id === 'string' || id === null || (typeof id === 'number' && Number.isFinite(id)))) {
    throw invalid(
      `Invalid Request: "id" must be a string, a number or null, received ${describeType(id)}`,
    );
  }
  return { kind: 'request', id, method, params };
}

export function jsonRpcResult<R>(id: RequestId, result: R): JsonRpcResultResponse<R> {
  return { jsonrpc: '2.0', id, result };
}

export function jsonRpcError(id: RequestId, error: ProtocolError): JsonRpcErrorResponse {
  return { jsonrpc: '2.0', id, error: error.toJsonRpcError() };
}

export function jsonRpcNotification<P>(method: string, params: P): JsonRpcNotification<P> {
  return { jsonrpc: '2.0', method, params };
}
