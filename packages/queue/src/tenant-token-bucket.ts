import { withDeadline } from './deadline.js';
import { createProducerConnection, whenReady, type RedisClient } from './redis-connection.js';
import { effectivePrefix, type RedisEndpoint } from './redis-endpoint.js';

/**
 * One token bucket per tenant, shared by every gateway on a REDIS_PREFIX: refilled at `ratePerS`
 * up to `burst`, on Redis's clock (TIME), so replicas whose clocks disagree still share one rate.
 * A caller takes up to `want` tokens in one call and spends them locally: a gateway leasing a
 * few at a time pays one command per few creates, and the tenant's total never exceeds the
 * bucket, however many gateways lease from it (a token leased and not spent is simply lost).
 * The key expires once a full bucket would have refilled, so idle tenants leave nothing behind.
 */
const TAKE_SCRIPT = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local saved = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(saved[1])
local at = tonumber(saved[2])
if tokens == nil or at == nil then
  tokens = burst
  at = nowMs
end
tokens = math.min(burst, tokens + math.max(0, nowMs - at) * rate / 1000)
local granted = math.min(want, math.floor(tokens))
tokens = tokens - granted
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(nowMs))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
local waitMs = 0
if granted == 0 then waitMs = math.ceil((1 - tokens) * 1000 / rate) end
return {granted, waitMs}
`;

export interface TokenGrant {
  /** Tokens taken, 0..want. */
  granted: number;
  /** With none granted: ms until the bucket holds one again. */
  retryAfterMs: number;
}

export interface TenantTokenBucket {
  /** Takes up to `want` tokens from the tenant's bucket; rejects when Redis does not answer in time. */
  take(
    tenant: string,
    limit: { ratePerS: number; burst: number },
    want: number,
  ): Promise<TokenGrant>;
  close(): Promise<void>;
}

export function tenantBucketKey(prefix: string, tenant: string): string {
  return `${prefix}:mcp-tenant-creates:${tenant}`;
}

type WithTake = RedisClient & {
  mcpTakeTenantTokens(key: string, rate: number, burst: number, want: number): Promise<unknown>;
};

export function createTenantTokenBucket(options: {
  redis: RedisEndpoint;
  prefix?: string;
  /** Bound on one take; the caller falls back to its own limit past it. Default 250 ms. */
  commandTimeoutMs?: number;
}): TenantTokenBucket {
  const prefix = effectivePrefix(options.redis, options.prefix);
  const timeoutMs = options.commandTimeoutMs ?? 250;
  const connection = createProducerConnection(options.redis, timeoutMs) as WithTake;
  // Errors reach the caller through the rejected command; this only keeps ioredis quiet.
  connection.on('error', () => undefined);
  // EVALSHA, with the script sent once more after a Redis restart (ioredis' defineCommand).
  connection.defineCommand('mcpTakeTenantTokens', { numberOfKeys: 1, lua: TAKE_SCRIPT });
  return {
    async take(tenant, limit, want) {
      const key = tenantBucketKey(prefix, tenant);
      const reply = await withDeadline(
        whenReady(connection).then(() =>
          connection.mcpTakeTenantTokens(key, limit.ratePerS, limit.burst, want),
        ),
        timeoutMs,
        `tenant rate bucket of ${tenant} timed out after ${timeoutMs} ms`,
      );
      const [granted, retryAfterMs] = reply as [number, number];
      return { granted, retryAfterMs };
    },
    async close() {
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
