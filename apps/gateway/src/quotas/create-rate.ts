import type { TenantTokenBucket } from '@mcp-tasks/queue';
import { createPollRateLimiter } from '../mcp/poll-rate-limit.js';

/**
 * The per-tenant create rate (TENANT_CREATE_RATE, TENANT_CREATE_BURST), held across every gateway
 * replica by one token bucket per tenant in Redis. A replica leases a few tokens at a time (about
 * 1/20 s of the rate) and spends them locally, so a steady stream of creates costs one Redis
 * command per lease, not per create; a refusal is remembered until the bucket's next token is
 * due, so a flood over the limit costs Redis nothing more. Tokens leased and not spent within a
 * second are dropped: leasing can only under-admit, never exceed the shared bucket.
 *
 * When Redis does not answer (outage, a slow command past the bucket's bound), each replica
 * falls back for a second at a time to a bucket of its own at the full rate: creates, which need
 * only Postgres, keep flowing, and the cluster-wide rate is then at most the number of replicas
 * times the setting.
 */
export interface CreateRate {
  /** 0 when one more create may go now, else the ms until it could. */
  take(tenant: string): Promise<number>;
}

export interface CreateRateOptions {
  bucket: Pick<TenantTokenBucket, 'take'>;
  ratePerS: number;
  burst: number;
  /** Redis did not answer: this replica limits on its own for a while. */
  onFallback?(error: unknown): void;
  now?: () => number;
}

const LEASE_TTL_MS = 1_000;
const FALLBACK_MS = 1_000;

interface TenantState {
  tokens: number;
  leaseExpiresAt: number;
  deniedUntil: number;
  fallbackUntil: number;
  leasing: Promise<void> | undefined;
}

export function createCreateRate(options: CreateRateOptions): CreateRate {
  const { bucket, ratePerS, burst } = options;
  const now = options.now ?? Date.now;
  const leaseSize = Math.max(1, Math.min(burst, Math.floor(ratePerS / 20)));
  const limit = { ratePerS, burst };
  const local = createPollRateLimiter({ burst, now });
  const localIntervalMs = 1_000 / ratePerS;
  const states = new Map<string, TenantState>();

  async function lease(tenant: string, state: TenantState): Promise<void> {
    try {
      const grant = await bucket.take(tenant, limit, leaseSize);
      state.tokens = grant.granted;
      state.leaseExpiresAt = now() + LEASE_TTL_MS;
      if (grant.granted === 0) state.deniedUntil = now() + Math.max(1, grant.retryAfterMs);
    } catch (error) {
      state.fallbackUntil = now() + FALLBACK_MS;
      options.onFallback?.(error);
    }
  }

  function stateOf(tenant: string): TenantState {
    let state = states.get(tenant);
    if (state === undefined) {
      // Entries are a few numbers; a tenant's entry lives while it creates (pruned below).
      if (states.size >= 100_000) pruneIdle();
      state = {
        tokens: 0,
        leaseExpiresAt: 0,
        deniedUntil: 0,
        fallbackUntil: 0,
        leasing: undefined,
      };
      states.set(tenant, state);
    }
    return state;
  }

  function pruneIdle(): void {
    const t = now();
    for (const [tenant, state] of states) {
      const idle =
        state.leasing === undefined && state.leaseExpiresAt <= t && state.deniedUntil <= t;
      if (idle) states.delete(tenant);
    }
  }

  return {
    async take(tenant) {
      const state = stateOf(tenant);
      for (;;) {
        const t = now();
        if (t < state.fallbackUntil) return local.take(tenant, localIntervalMs);
        if (t < state.deniedUntil) return state.deniedUntil - t;
        if (state.tokens > 0 && t < state.leaseExpiresAt) {
          state.tokens -= 1;
          return 0;
        }
        // One lease at a time per tenant: creates arriving meanwhile share what it brings.
        state.leasing ??= lease(tenant, state).finally(() => {
          state.leasing = undefined;
        });
        await state.leasing;
      }
    },
  };
}
