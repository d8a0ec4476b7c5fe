import { retryLater } from '../errors.js';
import type { CreateRate } from './create-rate.js';
import type { InFlightCounts } from './in-flight-counts.js';

/** The per-tenant limits on creating tasks; 0 turns a limit off. */
export interface TenantLimits {
  /** TENANT_MAX_IN_FLIGHT: tasks accepted and not finished (`working`, `input_required`). */
  maxInFlight: number;
  /** TENANT_CREATE_RATE: task creates per second, across every gateway replica. */
  createRatePerS: number;
  /** TENANT_CREATE_BURST: creates allowed at once after a quiet spell. */
  createBurst: number;
}

/** How soon a tenant at its in-flight cap is told to retry: the count's own refresh. */
export const IN_FLIGHT_REFRESH_MS = 1_000;

/**
 * Asked by tools/call before a task is created (never for a sync tool or an MRTR round, which
 * create nothing): resolves when this tenant may create one more task now, else throws the
 * 429 of retryLater naming the limit and its setting. The in-flight cap is checked first, so a
 * refused create spends none of the tenant's rate.
 */
export interface TenantAdmission {
  admit(tenant: string): Promise<void>;
}

export const ADMIT_EVERYONE: TenantAdmission = { admit: () => Promise.resolve() };

export interface TenantAdmissionOptions {
  limits: TenantLimits;
  inFlight: InFlightCounts | undefined;
  createRate: CreateRate | undefined;
  onRefused?(reason: 'tenant_in_flight_limit' | 'tenant_rate_limited'): void;
}

export function createTenantAdmission(options: TenantAdmissionOptions): TenantAdmission {
  const { limits, inFlight, createRate } = options;
  return {
    async admit(tenant) {
      if (inFlight !== undefined) {
        const count = await inFlight.current(tenant);
        if (count >= limits.maxInFlight) {
          options.onRefused?.('tenant_in_flight_limit');
          throw retryLater({
            status: 429,
            reason: 'tenant_in_flight_limit',
            message: `Too many tasks in flight for this tenant: ${count} accepted and not finished, the most allowed is ${limits.maxInFlight} (TENANT_MAX_IN_FLIGHT). Retry once some have finished.`,
            retryAfterMs: IN_FLIGHT_REFRESH_MS,
            data: { limit: 'TENANT_MAX_IN_FLIGHT', value: limits.maxInFlight },
          });
        }
      }
      if (createRate !== undefined) {
        const waitMs = await createRate.take(tenant);
        if (waitMs > 0) {
          options.onRefused?.('tenant_rate_limited');
          throw retryLater({
            status: 429,
            reason: 'tenant_rate_limited',
            message: `This tenant creates tasks faster than allowed: at most ${limits.createRatePerS} per second (TENANT_CREATE_RATE), ${limits.createBurst} at once (TENANT_CREATE_BURST). Retry after ${waitMs} ms.`,
            retryAfterMs: waitMs,
            data: { limit: 'TENANT_CREATE_RATE', value: limits.createRatePerS },
          });
        }
      }
      inFlight?.noteAdmitted(tenant);
    },
  };
}
