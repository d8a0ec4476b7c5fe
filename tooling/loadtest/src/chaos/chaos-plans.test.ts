import { describe, expect, it } from 'vitest';
import { runLoad } from '../load/run-load.js';
import { CHAOS_PLANS, resolveChaosPlans } from './registry.js';

/**
 * Every chaos plan, briefly, against a real stack (nginx, gateways, workers, the harness's own
 * Redis, and its own Postgres primary and standby for the restart and failover plans, per-worker
 * TCP proxies for the partition): each
 * plan really acted on its target (the OS's word for it, carried in the events' evidence) and
 * the checker passes.
 */
describe('the chaos plans against a real stack', () => {
  it('each plan kills, pauses, restarts or cuts off its target, and the checker passes', async () => {
    const run = await runLoad({
      tasks: 5_000,
      concurrency: 8,
      gateways: 2,
      workers: 2,
      chaos: resolveChaosPlans('all'),
      // One turn each, one round per turn, then the load ends (however busy the machine):
      // every assertion below needs one round of each plan.
      chaosPhaseMs: 1_000,
      chaosPasses: 1,
      seed: 9,
      taskBoundMs: 120_000,
      leaseMs: 2_000,
      log: () => undefined,
    });
    const events = run.records.flatMap((r) => (r.kind === 'chaos' ? [r] : []));
    const seen = (plan: string) => events.filter((e) => e.plan === plan);
    /** Each of the plan's first-action events with the event that closed its round. */
    const rounds = (plan: string, first: string, second: string) => {
      const list = seen(plan);
      const pairs = list.flatMap((e, i) =>
        e.action === first && list[i + 1]?.action === second && list[i + 1]?.target === e.target
          ? [[e.evidence ?? {}, list[i + 1]!.evidence ?? {}] as const]
          : [],
      );
      expect(pairs.length, `${plan}: ${first} → ${second}`).toBeGreaterThan(0);
      return pairs;
    };
    const pidOf = (evidence: Record<string, unknown>) => {
      expect(evidence.pid).toEqual(expect.any(Number));
      return evidence.pid as number;
    };
    // Killed: the process ended by SIGKILL, and what runs now is a new process.
    for (const plan of ['kill-gateway', 'kill-worker'])
      for (const [kill, restart] of rounds(plan, 'kill', 'restart')) {
        expect(restart.exit).toBe('SIGKILL');
        expect(pidOf(restart)).not.toBe(pidOf(kill));
      }
    // Paused: the kernel had the process stopped (T), and running again after SIGCONT.
    for (const [paused, resumed] of rounds('pause-worker', 'pause', 'resume')) {
      expect(paused.state).toBe('T');
      expect(resumed.state).toMatch(/^[RSD]$/);
      expect(pidOf(resumed)).toBe(pidOf(paused));
    }
    // Restarted servers: a new server process (the postmaster's pid for Postgres).
    for (const plan of ['redis-restart', 'postgres-restart'])
      for (const [before, after] of rounds(plan, 'restart', 'restarted'))
        expect(pidOf(after)).not.toBe(pidOf(before));
    // Partitioned: open connections were reset, and the worker's reconnects were refused until healed.
    for (const [cut, heal] of rounds('partition', 'cut', 'heal')) {
      expect(cut.connectionsReset).toBeGreaterThan(0);
      expect(cut.openAfterCut).toBe(0);
      expect(heal.refusedWhileCut).toBeGreaterThan(0);
    }
    // Rolled: each process drained and exited 0 on SIGTERM, and a new one took its place.
    for (const [sigterm, restart] of rounds('rolling', 'sigterm', 'restart')) {
      expect(restart.exit).toBe(0);
      expect(pidOf(restart)).not.toBe(pidOf(sigterm));
    }
    // Failed over: the primary that was killed is gone for good, the standby took its place
    // (another postmaster), and a new standby was built from it.
    for (const [kill, promoted] of rounds('failover', 'kill-primary', 'promoted')) {
      expect(promoted.oldPrimary).toBe(kill.primary);
      expect(promoted.oldPrimaryPid).toBe(pidOf(kill));
      expect(promoted.newPrimary).toBe(kill.standby);
      expect(promoted.newPrimaryPid).toEqual(expect.any(Number));
      expect(promoted.newPrimaryPid).not.toBe(kill.pid);
    }
    expect(rounds('failover', 'promoted', 'standby-added').length).toBeGreaterThan(0);
    expect(new Set(events.map((e) => e.plan))).toEqual(
      new Set(resolveChaosPlans('all').map((p) => p.name)),
    );
    for (const e of events.filter((x) => x.plan.endsWith('-worker') || x.plan === 'partition'))
      expect(e.target).toMatch(/^worker-\d$/);
    expect(run.records.some((r) => r.kind === 'step')).toBe(true);
    expect(run.check.violations).toEqual([]);
    expect(run.check.acknowledgedTasks).toBeGreaterThan(0);
  }, 600_000);

  it('rejects an unknown plan name, listing the valid ones', () => {
    expect(() => resolveChaosPlans('kill-worker,kill-everything')).toThrow(
      'unknown chaos plan "kill-everything"; valid: none, kill-gateway, kill-worker, pause-worker, redis-restart, postgres-restart, partition, rolling, failover, pooler-restart, kill-replica, kill-redis-master, all',
    );
  });

  it('runs each topology its own plans first under all, and refuses them on another topology', () => {
    expect(resolveChaosPlans('all').map((p) => p.name)).toEqual(
      CHAOS_PLANS.map((p) => p.name).filter(
        (name) => !['pooler-restart', 'kill-replica'].includes(name),
      ),
    );
    expect(resolveChaosPlans('all', 'pooler').map((p) => p.name)).toEqual([
      'pooler-restart',
      'kill-gateway',
      'kill-worker',
      'pause-worker',
      'redis-restart',
      'postgres-restart',
      'partition',
      'rolling',
      'failover',
    ]);
    expect(resolveChaosPlans('all', 'replicas').map((p) => p.name)).toEqual([
      'kill-replica',
      'kill-gateway',
      'kill-worker',
      'pause-worker',
      'redis-restart',
      'postgres-restart',
      'partition',
      'rolling',
    ]);
    expect(() => resolveChaosPlans('kill-replica')).toThrow(
      'chaos plan kill-replica runs with --topology replicas, not direct',
    );
    expect(() => resolveChaosPlans('failover', 'replicas')).toThrow(
      'chaos plan failover runs with --topology direct or pooler, not replicas',
    );
  });

  it("runs replicas on a Redis Cluster: both topologies' own plans first", () => {
    expect(resolveChaosPlans('all', 'replicas', 'cluster').map((p) => p.name)).toEqual([
      'kill-replica',
      'kill-redis-master',
      'kill-gateway',
      'kill-worker',
      'pause-worker',
      'postgres-restart',
      'rolling',
    ]);
  });
});
