import { createServer, type IncomingMessage } from 'node:http';
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

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

/**
 * A small OTLP/HTTP trace receiver for tests, instead of a collector binary: accepts exports on
 * POST /v1/traces in http/protobuf and http/json, and keeps every span. Anything else is 404 or
 * 415, so an exporter pointed at the wrong path or speaking another encoding fails visibly.
 */
export async function startOtlpReceiver(
  options: {
    /** false: decode and count only (a benchmark's receiver must not grow without bound). */
    keepSpans?: boolean;
  } = {},
): Promise<OtlpReceiver> {
  const keep = options.keepSpans ?? true;
  const collected: CollectedSpan[] = [];
  let count = 0;
  const accept = (spans: CollectedSpan[]): void => {
    count += spans.length;
    if (keep) collected.push(...spans);
  };
  const types: string[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((request, response) => {
    if (request.method !== 'POST' || request.url !== '/v1/traces') {
      response.writeHead(404).end();
      return;
    }
    const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim();
    readBody(request).then(
      (body) => {
        if (type === 'application/x-protobuf') {
          accept(decodeProtobufExport(body));
          response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        } else if (type === 'application/json') {
          accept(decodeJsonExport(JSON.parse(body.toString('utf8'))));
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else {
          response.writeHead(415).end();
          return;
        }
        types.push(type);
        for (const wake of waiters) wake();
      },
      (error: unknown) => response.writeHead(400).end(String(error)),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    spans: () => collected,
    spanCount: () => count,
    contentTypes: () => types,
    waitFor(done, timeoutMs = 30_000) {
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
                  (s) =>
                    `  ${s.serviceName} ${s.name} ${s.traceId}/${s.spanId} <- ${s.parentSpanId}`,
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
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
