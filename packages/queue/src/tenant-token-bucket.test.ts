import { createTestRedis, type TestRedis } from '@mcp-tasks/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTenantTokenBucket,
  tenantBucketKey,
  type TenantTokenBucket,
} from './tenant-token-bucket.js';

let redis: TestRedis;
let admin: Redis;
/** Two gateways' buckets: two connections to one Redis prefix. */
let replicaA: TenantTokenBucket;
let replicaB: TenantTokenBucket;

beforeAll(async () => {
  redis = await createTestRedis('tenant_bucket');
  admin = new Redis(redis.url);
  replicaA = createTenantTokenBucket({ redis: { url: redis.url }, prefix: redis.prefix });
  replicaB = createTenantTokenBucket({ redis: { url: redis.url }, prefix: redis.prefix });
});

afterAll(async () => {
  await Promise.all([replicaA.close(), replicaB.close()]);
  await redis.deleteKeys();
  admin.disconnect();
});

describe('the shared tenant token bucket', () => {
  it('grants up to the burst across replicas, then refuses with the wait for the next token', async () => {
    const limit = { ratePerS: 2, burst: 5 };
    const first = await replicaA.take('acme', limit, 3);
    const second = await replicaB.take('acme', limit, 3);
    const third = await replicaA.take('acme', limit, 3);
    expect([first.granted, second.granted, third.granted]).toEqual([3, 2, 0]);
    // Empty at 2 tokens a second: the next one is due within half a second.
    expect(third.retryAfterMs).toBeGreaterThan(0);
    expect(third.retryAfterMs).toBeLessThanOrEqual(500);
  });

  it('refills at the rate on Redis time, never above the burst', async () => {
    const limit = { ratePerS: 20, burst: 2 };
    expect((await replicaA.take('initech', limit, 2)).granted).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // 300 ms at 20/s is 6 tokens' worth, but the bucket holds 2.
    expect((await replicaB.take('initech', limit, 10)).granted).toBe(2);
  });

  it('keeps one bucket per tenant', async () => {
    const limit = { ratePerS: 1, burst: 1 };
    expect((await replicaA.take('tenant-one', limit, 1)).granted).toBe(1);
    expect((await replicaA.take('tenant-one', limit, 1)).granted).toBe(0);
    expect((await replicaA.take('tenant-two', limit, 1)).granted).toBe(1);
  });

  it('lets an idle tenant’s key expire once a full bucket would have refilled', async () => {
    await replicaA.take('hooli', { ratePerS: 10, burst: 10 }, 1);
    const ttl = await admin.pttl(tenantBucketKey(redis.prefix, 'hooli'));
    expect(ttl).toBeGreaterThan(1_000);
    expect(ttl).toBeLessThanOrEqual(2_000);
  });

  it('rejects within its bound when Redis does not answer', async () => {
    const unreachable = createTenantTokenBucket({
      redis: { url: 'redis://127.0.0.1:1' },
      commandTimeoutMs: 200,
    });
    const started = Date.now();
    await expect(unreachable.take('acme', { ratePerS: 1, burst: 1 }, 1)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1_000);
    await unreachable.close();
  });
});
