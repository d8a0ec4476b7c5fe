import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { gunzipSync } from 'node:zlib';
import { decodeJsonExport, decodeProtobufExport, type CollectedSpan } from './otlp-trace.js';

/** A running receiver: point OTEL_EXPORTER_OTLP_ENDPOINT at `endpoint`. */
export interface OtlpReceiver {
  /** The base URL (the exporters append /v1/traces). */
  endpoint: string;
  spans(): readonly CollectedSpan[];
  /** Spans received, also those not kept. */
  spanCount(): number;
  /** Each export's content type, in arrival order (which encoding the exporter chose). */
  contentTypes(): readonly string[];
  /** Resolves with the spans once `done` holds for them; rejects with what arrived after timeoutMs. */
  waitFor(
    done: (spans: readonly CollectedSpan[]) => boolean,
    timeoutMs?: number,
  ): Promise<readonly CollectedSpan[]>;
  close(): Promise<void>;
}

/** google.rpc.Code INVALID_ARGUMENT, the Status code of a request that cannot be decoded. */
const INVALID_ARGUMENT = 3;

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new Error(`JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** google.rpc.Status { int32 code = 1; string message = 2; }; the message cut to one length byte. */
function encodeStatus(code: number, message: string): Buffer {
  const text = Buffer.from(message, 'utf8').subarray(0, 127);
  return Buffer.concat([Buffer.from([0x08, code, 0x12, text.length]), text]);
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

/**
 * A small OTLP/HTTP trace receiver for tests, instead of a collector binary: accepts exports on
 * POST /v1/traces in http/protobuf and http/json, and keeps every span. Anything else is 404 or
 * 415, so an exporter pointed at the wrong path or speaking another encoding fails visibly; a body
 * that does not decode is 400 with a Status saying why, and none of its spans are kept.
 */
export async function startOtlpReceiver(
  options: {
    /** false: decode and count only (a benchmark's receiver must not grow without bound). */
    keepSpans?: boolean;
  } = {},
): Promise<OtlpReceiver> {
  const received: Received = {
    keep: options.keepSpans ?? true,
    collected: [],
    count: 0,
    types: [],
    waiters: new Set<() => void>(),
  };
  const server = createServer((request, response) => receiveExport(received, request, response));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    spans: () => received.collected,
    spanCount: () => received.count,
    contentTypes: () => received.types,
    waitFor: (done, timeoutMs) => waitForSpans(received, done, timeoutMs),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What the receiver has taken in so far, and who waits for more. */
interface Received {
  readonly keep: boolean;
  readonly collected: CollectedSpan[];
  count: number;
  readonly types: string[];
  readonly waiters: Set<() => void>;
}

/** One request: an export on POST /v1/traces is decoded and its spans taken in; else 404 or 415. */
function receiveExport(
  received: Received,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  if (request.method !== 'POST' || request.url !== '/v1/traces') {
    response.writeHead(404).end();
    return;
  }
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim();
  if (type !== 'application/x-protobuf' && type !== 'application/json') {
    response.writeHead(415).end();
    return;
  }
  const accept = (spans: CollectedSpan[]): void => {
    received.count += spans.length;
    if (received.keep) received.collected.push(...spans);
  };
  readBody(request)
    .then((body) => {
      if (type === 'application/x-protobuf') {
        accept(decodeProtobufExport(body));
        response.writeHead(200, { 'content-type': type }).end();
      } else {
        accept(decodeJsonExport(parseJson(body)));
        response.writeHead(200, { 'content-type': type }).end('{}');
      }
      received.types.push(type);
      for (const wake of received.waiters) wake();
    })
    .catch((error: unknown) => {
      // OTLP/HTTP: undecodable data is 400 with a google.rpc.Status in the request's encoding.
      const message = error instanceof Error ? error.message : String(error);
      response
        .writeHead(400, { 'content-type': type })
        .end(
          type === 'application/json'
            ? JSON.stringify({ code: INVALID_ARGUMENT, message })
            : encodeStatus(INVALID_ARGUMENT, message),
        );
    });
}

function waitForSpans(
  received: Received,
  done: (spans: readonly CollectedSpan[]) => boolean,
  timeoutMs = 30_000,
): Promise<readonly CollectedSpan[]> {
  const { collected, waiters } = received;
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!done(collected)) return;
      cleanup();
      resolve(collected);
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(
        new Error(
          `spans not as expected after ${timeoutMs} ms; received:\n${collected
            .map(
              (s) => `  ${s.serviceName} ${s.name} ${s.traceId}/${s.spanId} <- ${s.parentSpanId}`,
            )
            .join('\n')}`,
        ),
      );
    }, timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      waiters.delete(check);
    };
    waiters.add(check);
    check();
  });
}
