import autocannon from 'autocannon';
import { createLatencyRecorder, type LatencySummary } from '../report/latency.js';
import { processCpuMs } from './cpu.js';
import type { HttpRequestSpec } from './mcp-requests.js';

export interface HttpLoadResult {
  connections: number;
  requestsPerS: number;
  latency: LatencySummary;
  /** Responses other than 2xx, bodies `expectBody` refused, socket errors and timeouts. */
  failures: number;
  /**
   * CPU the serving process spent per request (user + system, µs), when its pid was given. Less
   * sensitive than req/s to what else runs on a shared machine: it counts work, not waiting.
   */
  serverCpuUsPerRequest?: number;
}

/**
 * autocannon against one URL for `durationS` at `connections` keep-alive connections. Latencies
 * are taken from autocannon's per-response times (sub-millisecond) into our HDR histogram, not
 * from its own histogram (whole milliseconds).
 */
export async function runHttpLoad(options: {
  baseUrl: string;
  request: HttpRequestSpec;
  connections: number;
  durationS: number;
  /** Open-loop rate, requests per second over all connections. */
  overallRate?: number;
  /** Checks each response body; a false answer counts as a failure. */
  expectBody?: (body: string) => boolean;
  /** The serving process, to measure its CPU per request. */
  serverPid?: number;
}): Promise<HttpLoadResult> {
  const cpuBefore = options.serverPid === undefined ? 0 : processCpuMs(options.serverPid);
  const latency = createLatencyRecorder();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${options.baseUrl}${options.request.path}`,
        method: 'POST',
        headers: options.request.headers,
        body: options.request.body,
        connections: options.connections,
        duration: options.durationS,
        overallRate: options.overallRate,
        timeout: 30,
        ...(options.expectBody === undefined
          ? {}
          : { verifyBody: options.expectBody as (body: unknown) => boolean }),
      },
      (error, finished) => (error ? reject(error as Error) : resolve(finished)),
    );
    instance.on('response', (_client, statusCode: number, _bytes, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300) latency.record(responseTime);
    });
  });
  // Socket errors include timeouts; a mismatch is a body `expectBody` refused.
  const failures = result.non2xx + result.errors + (result.mismatches ?? 0);
  const cpuUs =
    options.serverPid === undefined
      ? undefined
      : (processCpuMs(options.serverPid) - cpuBefore) * 1_000;
  return {
    connections: options.connections,
    requestsPerS: result.requests.total / (result.duration || options.durationS),
    latency: latency.summary(),
    failures,
    ...(cpuUs === undefined || result.requests.total === 0
      ? {}
      : { serverCpuUsPerRequest: cpuUs / result.requests.total }),
  };
}
