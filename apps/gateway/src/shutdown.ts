import type { Server } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';

/** How long past the grace the close steps may take before the process gives up on them. */
export const SHUTDOWN_HARD_MARGIN_MS = 5_000;

export interface ShutdownOptions {
  server: Server;
  logger: Logger;
  /** Aborted first: /readyz answers 503 while requests are still served normally. */
  notReady: AbortController;
  /** Aborted after the readiness delay: new /mcp requests get 503, listen streams end. */
  draining: AbortController;
  /** Requests whose handlers are still running (their sockets may already be cut). */
  inFlight: () => number;
  /** MCP_SHUTDOWN_DELAY_MS: time for a load balancer to see /readyz fail. */
  readinessDelayMs: number;
  /** MCP_SHUTDOWN_GRACE_MS: in-flight requests get this long to finish. */
  graceMs: number;
  /** Closes the LISTEN connection, the queue and the pools. */
  closeResources: () => Promise<void>;
  exit: (code: number) => void;
  /** Defaults to SHUTDOWN_HARD_MARGIN_MS. */
  hardMarginMs?: number;
}

/**
 * The way out, in order: readiness fails (the port still serves) → stop accepting and end listen
 * streams → drain in-flight requests up to the grace, then cut the rest → wait for their handlers
 * (so the pools are not closed under a running query) → close resources → exit 0. A hard
 * deadline of delay + grace + 5 s exits 1 if any step hangs (Redis down, a stuck pool).
 */
export function createShutdown(options: ShutdownOptions): (signal: string) => Promise<void> {
  const { server, logger } = options;
  let started = false;
  return async (signal) => {
    if (started) return;
    started = true;
    const hardDeadlineMs =
      options.readinessDelayMs +
      options.graceMs +
      (options.hardMarginMs ?? SHUTDOWN_HARD_MARGIN_MS);
    const hardExit = setTimeout(() => {
      logger.error({ hardDeadlineMs }, 'shutdown did not finish in time; exiting');
      options.exit(1);
    }, hardDeadlineMs);
    hardExit.unref();

    logger.info({ signal }, 'shutting down: readiness fails, requests still served');
    options.notReady.abort();
    if (options.readinessDelayMs > 0) await delay(options.readinessDelayMs);

    logger.info('draining: no new connections, ending listen streams');
    // Streams first: they would otherwise hold server.close() open until the grace runs out.
    options.draining.abort();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // A keep-alive connection turns idle only when its last response (a listen stream) ends;
    // close such connections as they go idle instead of waiting out the keep-alive timeout.
    server.closeIdleConnections();
    const sweepIdle = setInterval(() => server.closeIdleConnections(), 100);
    void closed.then(() => clearInterval(sweepIdle));
    const graceOver = delay(options.graceMs, undefined, { ref: false }).then(() => 'grace');
    if ((await Promise.race([closed, graceOver])) === 'grace') {
      logger.warn({ graceMs: options.graceMs }, 'grace period over; closing remaining connections');
      server.closeAllConnections();
      await closed;
    }
    // A cut connection does not stop its handler: let it finish before its pool goes away.
    while (options.inFlight() > 0) await delay(50);

    await options.closeResources();
    clearTimeout(hardExit);
    logger.info('gateway stopped');
    options.exit(0);
  };
}
