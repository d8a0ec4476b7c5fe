import { createTenantTokenBucket, type TenantTokenBucket } from '@mcp-tasks/queue';
import { createTestRedis, type TestRedis } from '@mcp-tasks/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreateRate } from './create-rate.js';

let redis: TestRedis;
let bucket: TenantTokenBucket;
/** The real bucket, its takes counted (each is one Redis command). */
let takes = 0;
const counted: Pick<TenantTokenBucket, 'take'> = {
  take: (...args) => {
    takes += 1;
    return bucket.take(...args);
  },
};

beforeAll(async () => {
  redis = await createTestRedis('create_rate');
  bucket = createTenantTokenBucket({ redis: { url: redis.url }, prefix: redis.prefix });
});
afterAll(async () => {
  await bucket.close();
  await redis.deleteKeys();
});

async function admitted(
  rate: ReturnType<typeof createCreateRate>,
  tenant: string,
  tries: number,
): Promise<number> {
  const waits = await Promise.all(Array.from({ length: tries }, () => rate.take(tenant)));
  return waits.filter((wait) => wait === 0).length;
}

describe('the per-tenant create rate', () => {
  it('spends leased tokens locally: one Redis command per lease, not per create', async () => {
    const rate = createCreateRate({ bucket: counted, ratePerS: 100, burst: 200 });
    takes = 0;
    // 100/s leases 5 tokens at a time.
    for (let i = 0; i < 50; i += 1) expect(await rate.take('lease-tenant')).toBe(0);
    expect(takes).toBe(10);
  });

  it('holds across replicas: two gateways together admit no more than the bucket allows', async () => {
    const limit = { bucket: counted, ratePerS: 1, burst: 10 };
    const replicas = [createCreateRate(limit), createCreateRate(limit)];
    const started = Date.now();
    const counts = await Promise.all(replicas.map((rate) => admitted(rate, 'shared', 15)));
    const elapsedS = (Date.now() - started) / 1_000;
    const total = counts[0]! + counts[1]!;
    expect(total).toBeGreaterThanOrEqual(10);
    // The burst, plus what the rate refilled while the test ran.
    expect(total).toBeLessThanOrEqual(10 + Math.ceil(elapsedS));
    expect(counts.every((count) => count > 0)).toBe(true);
  });

  it('answers a refusal with the wait for the next token and remembers it: a flood costs Redis nothing more', async () => {
    const rate = createCreateRate({ bucket: counted, ratePerS: 1, burst: 1 });
    expect(await rate.take('flood')).toBe(0);
    takes = 0;
    const waits = await Promise.all(Array.from({ length: 100 }, () => rate.take('flood')));
    expect(waits.every((wait) => wait > 0 && wait <= 1_000)).toBe(true);
    expect(takes).toBe(1);
  });

  it('limits each replica on its own while Redis does not answer, and says so', async () => {
    const unreachable = createTenantTokenBucket({
      redis: { url: 'redis://127.0.0.1:1' },
      commandTimeoutMs: 100,
    });
    const fallbacks: unknown[] = [];
    const rate = createCreateRate({
      bucket: unreachable,
      ratePerS: 1,
      burst: 3,
      onFallback: (error) => fallbacks.push(error),
    });
    const waits: number[] = [];
    for (let i = 0; i < 5; i += 1) waits.push(await rate.take('outage'));
    expect(waits.slice(0, 3)).toEqual([0, 0, 0]);
    expect(waits.slice(3).every((wait) => wait > 0)).toBe(true);
    expect(fallbacks).toHaveLength(1);
    await unreachable.close();
  });
});
