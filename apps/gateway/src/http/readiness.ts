import type { Hono } from 'hono';
import type { Logger } from 'pino';
import type { GatewayVariables } from './gateway-variables.js';

/** What /readyz asks, each bounded; workers are reported, never checked. */
export interface ReadinessSources {
  /** The store's checks (primary, and each read replica when there are any). */
  databaseChecks: readonly { name: string; check: () => Promise<unknown> }[];
  /** Only readiness is asked of the queue here. */
  queue: { ping(): Promise<void> };
  /** The identity provider's keys, when tokens are verified against one. */
  authReady?: (() => Promise<unknown>) | undefined;
  workerLiveness?: { check(): Promise<unknown> } | undefined;
  /** Either aborted: /readyz answers 503 draining. */
  shutdownSignal: AbortSignal;
  notReadySignal?: AbortSignal | undefined;
}

/**
 * One readiness check, bounded. The answer is only `ok` or `fail`: /readyz is unauthenticated,
 * and driver errors name internal hosts and ports, so the detail goes to the log instead.
 */
async function probe(
  name: string,
  check: () => Promise<unknown>,
  timeoutMs: number,
  log: Logger,
): Promise<[string, string]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise(
        (_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), timeoutMs)),
      ),
    ]);
    return [name, 'ok'];
  } catch (error) {
    log.warn({ err: error, check: name }, 'readiness check failed');
    return [name, 'fail'];
  } finally {
    clearTimeout(timer);
  }
}

/** GET /healthz (the process answers) and GET /readyz (it can serve: store, Redis, provider). */
export function addHealthRoutes(app: Hono<GatewayVariables>, sources: ReadinessSources): void {
  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  app.get('/readyz', async (c) => {
    if (sources.shutdownSignal.aborted || sources.notReadySignal?.aborted === true)
      return c.json({ status: 'draining' }, 503);
    const log = c.get('log')();
    const workersCheck = sources.workerLiveness?.check();
    const authReady = sources.authReady;
    const checks = await Promise.all([
      ...sources.databaseChecks.map(({ name, check }) => probe(name, check, 2000, log)),
      probe('redis', () => sources.queue.ping(), 2000, log),
      // Without the provider's keys no token can be verified: this replica serves nobody.
      ...(authReady === undefined ? [] : [probe('identity_provider', authReady, 2000, log)]),
    ]);
    // Workers are reported, not checked: a fresh cluster whose workers are still starting must
    // not take every gateway out of the load balancer (tasks are durable and wait).
    const ready = checks.every(([, outcome]) => outcome === 'ok');
    const workers = await workersCheck;
    return c.json(
      {
        status: ready ? 'ready' : 'not_ready',
        checks: Object.fromEntries(checks),
        ...(workers === undefined ? {} : { workers }),
      },
      ready ? 200 : 503,
    );
  });
}
