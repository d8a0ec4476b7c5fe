import { createTenantTokenBucket, type RedisEndpoint } from '@mcp-tasks/queue';
import { countTasksInFlight, type Db } from '@mcp-tasks/store';
import type { Logger } from 'pino';
import type { GatewayMetrics } from '../metrics.js';
import { createCreateRate } from './create-rate.js';
import { createInFlightCounts } from './in-flight-counts.js';
import {
  IN_FLIGHT_REFRESH_MS,
  createTenantAdmission,
  type TenantAdmission,
  type TenantLimits,
} from './tenant-admission.js';

export {
  ADMIT_EVERYONE,
  createTenantAdmission,
  type TenantAdmission,
  type TenantLimits,
} from './tenant-admission.js';

/** The per-tenant limits of one gateway process, wired: counts in Postgres, the rate in Redis. */
export function startTenantQuotas(options: {
  limits: TenantLimits;
  /** The primary: the count must see the creates that just committed. */
  db: Db;
  redis: RedisEndpoint;
  redisPrefix: string | undefined;
  metrics: GatewayMetrics;
  logger: Logger;
}): { admission: TenantAdmission; close(): Promise<void> } {
  const { limits, metrics, logger } = options;
  metrics.tenantLimits.set({ limit: 'TENANT_MAX_IN_FLIGHT' }, limits.maxInFlight);
  metrics.tenantLimits.set({ limit: 'TENANT_CREATE_RATE' }, limits.createRatePerS);
  metrics.tenantLimits.set({ limit: 'TENANT_CREATE_BURST' }, limits.createBurst);
  const inFlight =
    limits.maxInFlight === 0
      ? undefined
      : createInFlightCounts({
          count: (tenants, atMost) => countTasksInFlight(options.db, tenants, atMost),
          atMost: limits.maxInFlight + 1,
          refreshMs: IN_FLIGHT_REFRESH_MS,
          onError: (error) => logger.warn({ err: error }, 'could not count tasks in flight'),
          onCounted: (highest) => metrics.tenantInFlightHighest.set(highest),
        });
  const bucket =
    limits.createRatePerS === 0
      ? undefined
      : createTenantTokenBucket({ redis: options.redis, prefix: options.redisPrefix });
  const createRate =
    bucket === undefined
      ? undefined
      : createCreateRate({
          bucket,
          ratePerS: limits.createRatePerS,
          burst: limits.createBurst,
          onFallback: (error) => {
            metrics.tenantRateFallbacks.inc();
            logger.warn(
              { err: error },
              'tenant create rate: Redis did not answer; limiting on this replica alone for 1 s',
            );
          },
        });
  return {
    admission: createTenantAdmission({
      limits,
      inFlight,
      createRate,
      onRefused: (reason) => metrics.tenantRefusals.inc({ reason }),
    }),
    close: async () => {
      await bucket?.close();
    },
  };
}
