import { Pool } from 'undici';
import { createLatencyRecorder, type LatencySummary } from '../report/latency.js';
import type { HttpRequestSpec } from './mcp-requests.js';

export interface ConstantRateResult {
  ratePerS: number;
  sent: number;
  /** From each request's scheduled time to its reply: queueing in the client counts too. */
  latency: LatencySummary;
  failures: number;
  /** Failures by what went wrong: `HTTP 503`, `-32603`, or the transport error's code. */
  failureReasons: Record<string, number>;
}

/**
 * An open loop: request i is sent at start + i/rate whatever happened to the others, so a slow
 * reply cannot slow the offered load (no coordinated omission). Latency runs from the scheduled
 * send time. Requests go through an undici Pool of keep-alive connections (a new one whenever all
 * are busy): `fetch` cost the sender about a millisecond per request, which the figure counted.
 */
export async function runConstantRate(options: {
  baseUrl: string;
  request: () => HttpRequestSpec;
  ratePerS: number;
  durationS: number;
  /** A reply body that is not a success counts as a failure. */
  isSuccess: (body: string) => boolean;
  /** Called with each successful reply's body (e.g. to wait for the task it created). */
  onSuccess?: (body: string) => void;
}): Promise<ConstantRateResult> {
  const latency = createLatencyRecorder();
  const intervalMs = 1_000 / options.ratePerS;
  const total = Math.round(options.ratePerS * options.durationS);
  const start = performance.now();
  let failures = 0;
  const failureReasons: Record<string, number> = {};
  const fail = (reason: string) => {
    failures += 1;
    failureReasons[reason] = (failureReasons[reason] ?? 0) + 1;
  };
  const pool = new Pool(options.baseUrl, { keepAliveTimeout: 60_000 });
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i += 1) {
    const scheduled = start + i * intervalMs;
    const wait = scheduled - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const spec = options.request();
    inFlight.push(
      pool
        .request({ method: 'POST', path: spec.path, headers: spec.headers, body: spec.body })
        .then(async (response) => {
          const body = await response.body.text();
          const ok = response.statusCode >= 200 && response.statusCode < 300;
          if (ok && options.isSuccess(body)) {
            latency.record(performance.now() - scheduled);
            options.onSuccess?.(body);
          } else fail(/"code":(-?\d+)/.exec(body)?.[1] ?? `HTTP ${response.statusCode}`);
        })
        .catch((error: unknown) => {
          const { code, cause } = error as { code?: string; cause?: { code?: string } };
          fail(code ?? cause?.code ?? (error instanceof Error ? error.name : 'error'));
        }),
    );
  }
  await Promise.all(inFlight);
  await pool.close();
  return {
    ratePerS: options.ratePerS,
    sent: total,
    latency: latency.summary(),
    failures,
    failureReasons,
  };
}
