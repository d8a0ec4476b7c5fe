import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import type { FuzzRequest } from './cases.js';

/** What came back for one request. */
export type Outcome =
  | { kind: 'answered'; status: number; contentType: string; body: string }
  /** The connection failed before a whole answer came (reset, closed mid-answer). */
  | { kind: 'reset'; error: string }
  /** Nothing (or not all of it) within the bound. */
  | { kind: 'hang'; afterMs: number };

export interface SendOptions {
  /** Where the gateway listens. */
  host: string;
  port: number;
  /** Longest wait for a whole answer (for an SSE stream: its headers and first event). */
  timeoutMs: number;
}

/** Sends one request and reads its answer; never throws. */
export function send(fuzz: FuzzRequest, options: SendOptions): Promise<Outcome> {
  return fuzz.kind === 'raw' ? sendRaw(fuzz.bytes, options) : sendHttp(fuzz, options);
}

function sendHttp(
  fuzz: Extract<FuzzRequest, { kind: 'http' }>,
  options: SendOptions,
): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: Outcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const headers: Record<string, string> = { ...fuzz.headers };
    if (!fuzz.chunked) headers['Content-Length'] = String(Buffer.byteLength(fuzz.body));
    let req: ReturnType<typeof httpRequest>;
    try {
      req = httpRequest({
        host: options.host,
        port: options.port,
        method: 'POST',
        path: '/mcp',
        headers,
        agent: false,
      });
    } catch (error) {
      // A header value Node's client refuses to send: nothing reached the server.
      finish({ kind: 'answered', status: 0, contentType: '', body: String(error) });
      return;
    }
    const timer = setTimeout(() => {
      finish({ kind: 'hang', afterMs: options.timeoutMs });
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (error) => finish({ kind: 'reset', error: error.message }));
    req.on('response', (response) => {
      const contentType = response.headers['content-type'] ?? '';
      const chunks: Buffer[] = [];
      const answered = () =>
        finish({
          kind: 'answered',
          status: response.statusCode ?? 0,
          contentType,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        // A listen stream stays open: its first event is the whole answer we wait for.
        if (contentType.startsWith('text/event-stream') && chunks.join('').includes('\n\n')) {
          answered();
          req.destroy();
        }
      });
      response.on('end', answered);
      response.on('error', (error) => finish({ kind: 'reset', error: error.message }));
    });
    req.end(fuzz.body);
  });
}

/** Raw bytes on a socket: an answer is whatever the server wrote before it closed. */
function sendRaw(bytes: string, options: SendOptions): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(options.port, options.host);
    let answer = '';
    let settled = false;
    const finish = (outcome: Outcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => finish({ kind: 'hang', afterMs: options.timeoutMs }),
      options.timeoutMs,
    );
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', (error) =>
      answer === '' ? finish({ kind: 'reset', error: error.message }) : undefined,
    );
    socket.on('close', () => {
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(answer);
      if (status === null) finish({ kind: 'reset', error: `closed without an answer: ${answer}` });
      else {
        const [head = '', ...rest] = answer.split('\r\n\r\n');
        const contentType = /^content-type: (.*)$/im.exec(head)?.[1] ?? '';
        finish({
          kind: 'answered',
          status: Number(status[1]),
          contentType,
          body: rest.join('\r\n\r\n'),
        });
      }
    });
    // All of it, then end: a body shorter than its declared length is cut short, not slow.
    socket.end(bytes, 'latin1');
  });
}
