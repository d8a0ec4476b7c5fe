import { redisClusterUnavailableReason } from '@mcp-tasks/testing';
import { describe, expect, it } from 'vitest';
import { runLoad } from '../load/run-load.js';
import { resolveChaosPlans } from './registry.js';

const unavailable = redisClusterUnavailableReason();
if (unavailable !== null && process.env.CI)
  throw new Error(`Redis Cluster chaos cannot run in CI: ${unavailable}`);

describe('chaos on a Redis Cluster', () => {
  it('runs every plan that applies to a cluster for `all`, kill-redis-master instead of the one-node plans', () => {
    expect(resolveChaosPlans('all', 'direct', 'cluster').map((plan) => plan.name)).toEqual([
      'kill-redis-master',
      'kill-gateway',
      'kill-worker',
      'pause-worker',
      'postgres-restart',
      'rolling',
      'failover',
    ]);
    expect(resolveChaosPlans('all').map((plan) => plan.name)).not.toContain('kill-redis-master');
  });

  it('refuses a plan that needs the one Redis node on a cluster', async () => {
    await expect(
      runLoad({
        tasks: 1,
        concurrency: 1,
        gateways: 1,
        workers: 1,
        chaos: resolveChaosPlans('redis-restart'),
        redisTopology: 'cluster',
        chaosPhaseMs: 1_000,
        seed: 1,
        taskBoundMs: 10_000,
        leaseMs: 2_000,
        log: () => undefined,
      }),
    ).rejects.toThrow(
      'on a Redis Cluster, redis-restart cannot run (they need the one Redis node of the default topology); use kill-redis-master',
    );
  });

  it.skipIf(unavailable !== null)(
    `kills the master holding the queue, the replica takes over, and the checker passes ${unavailable ?? ''}`,
    async () => {
      const run = await runLoad({
        tasks: 2_000,
        durationMs: 15_000,
        concurrency: 6,
        gateways: 2,
        workers: 2,
        chaos: resolveChaosPlans('kill-redis-master'),
        chaosPhaseMs: 15_000,
        seed: 26,
        taskBoundMs: 120_000,
        leaseMs: 2_000,
        log: () => undefined,
      });
      const events = run.records.flatMap((r) => (r.kind === 'chaos' ? [r] : []));
      const promotions = events.filter((e) => e.action === 'promoted');
      expect(promotions.length).toBeGreaterThan(0);
      for (const promoted of promotions) {
        expect(promoted.evidence?.killed).toEqual(expect.stringMatching(/^127\.0\.0\.1:\d+$/));
        expect(promoted.evidence?.promoted).toEqual(expect.stringMatching(/^127\.0\.0\.1:\d+$/));
        expect(promoted.evidence?.promoted).not.toBe(promoted.evidence?.killed);
      }
      expect(events.some((e) => e.action === 'rejoined')).toBe(true);
      expect(run.check.violations).toEqual([]);
      expect(run.check.acknowledgedTasks).toBeGreaterThan(0);
    },
    300_000,
  );
});
