import { describe, expect, it } from 'vitest';
import { runLoad } from '../load/run-load.js';
import { CHAOS_PLANS, resolveChaosPlans } from './registry.js';

/**
 * Every chaos plan, briefly, against a real stack (nginx, gateways, workers, the harness's own
 * Redis and Postgres for their restart plans): the history holds each plan's events and the
 * checker passes on it.
 */
describe('the chaos plans against a real stack', () => {
  it('each plan acts (its events are in the history) and the checker passes', async () => {
    const run = await runLoad({
      tasks: 5_000,
      // Long enough for every plan to take its turn (the phases run in order).
      durationMs: 70_000,
      concurrency: 8,
      gateways: 2,
      workers: 2,
      chaos: resolveChaosPlans('all'),
      chaosPhaseMs: 4_000,
      seed: 9,
      taskBoundMs: 120_000,
      leaseMs: 2_000,
      log: () => undefined,
    });
    const events = run.records.flatMap((r) => (r.kind === 'chaos' ? [r] : []));
    const seen = (plan: string) => events.filter((e) => e.plan === plan).map((e) => e.action);
    expect(seen('kill-gateway').slice(0, 2)).toEqual(['kill', 'restart']);
    expect(seen('kill-worker').slice(0, 2)).toEqual(['kill', 'restart']);
    expect(seen('pause-worker').slice(0, 2)).toEqual(['pause', 'resume']);
    expect(seen('redis-restart').slice(0, 2)).toEqual(['restart', 'restarted']);
    expect(seen('postgres-restart').slice(0, 2)).toEqual(['restart', 'restarted']);
    expect(seen('rolling').slice(0, 2)).toEqual(['sigterm', 'restart']);
    expect(new Set(events.map((e) => e.plan))).toEqual(new Set(CHAOS_PLANS.map((p) => p.name)));
    for (const e of events.filter((x) => x.plan.endsWith('-worker')))
      expect(e.target).toMatch(/^worker-\d$/);
    expect(run.records.some((r) => r.kind === 'step')).toBe(true);
    expect(run.check.violations).toEqual([]);
    expect(run.check.acknowledgedTasks).toBeGreaterThan(0);
  }, 600_000);

  it('rejects an unknown plan name, listing the valid ones', () => {
    expect(() => resolveChaosPlans('kill-worker,kill-everything')).toThrow(
      'unknown chaos plan "kill-everything"; valid: none, kill-gateway, kill-worker, pause-worker, redis-restart, postgres-restart, rolling, all',
    );
  });
});
