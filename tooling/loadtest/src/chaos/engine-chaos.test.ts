import {
  pgBouncerUnavailableReason,
  replicaUnavailableReason,
  skipUnlessEngine,
} from '@mcp-tasks/testing';
import { describe, expect, it } from 'vitest';
import type { DatabaseTopology } from '../load/database-topology.js';
import { runLoad } from '../load/run-load.js';
import { resolveChaosPlans } from './registry.js';

/**
 * The engine topologies' own chaos plans against a real stack (issue 26, part 4): PgBouncer
 * restarted under the load, a replica behind the reader endpoint crashed and started again. Each
 * round really replaced its target (a new pid) and the checker passes: nothing acknowledged lost.
 */
const skipPooler = skipUnlessEngine('PgBouncer', pgBouncerUnavailableReason());
const skipReplicas = skipUnlessEngine('streaming replicas', replicaUnavailableReason());

async function runPlan(topology: DatabaseTopology, plan: string) {
  const run = await runLoad({
    tasks: 2_000,
    concurrency: 6,
    gateways: 2,
    workers: 2,
    topology,
    chaos: resolveChaosPlans(plan, topology),
    // One round, then the load ends: each test below needs one replaced target.
    chaosPhaseMs: 1_000,
    chaosPasses: 1,
    seed: 26,
    taskBoundMs: 120_000,
    leaseMs: 2_000,
    log: () => undefined,
  });
  const events = run.records.flatMap((r) => (r.kind === 'chaos' ? [r] : []));
  return { run, events };
}

describe('the engine topologies under their own chaos', () => {
  it.skipIf(skipPooler)(
    'pooler-restart: a new PgBouncer each round, 0 lost',
    async () => {
      const { run, events } = await runPlan('pooler', 'pooler-restart');
      const restarts = events.filter((e) => e.action === 'restart');
      const restarted = events.filter((e) => e.action === 'restarted');
      expect(restarts.length).toBeGreaterThan(0);
      expect(restarted.length).toBeGreaterThan(0);
      expect(restarted[0]?.evidence?.pid).not.toBe(restarts[0]?.evidence?.pid);
      expect(run.check.violations).toEqual([]);
      expect(run.check.acknowledgedTasks).toBeGreaterThan(0);
    },
    300_000,
  );

  it.skipIf(skipReplicas)(
    'kill-replica: a replica crashed and back each round, 0 lost',
    async () => {
      const { run, events } = await runPlan('replicas', 'kill-replica');
      const kills = events.filter((e) => e.action === 'kill');
      const restarts = events.filter((e) => e.action === 'restart');
      expect(kills.length).toBeGreaterThan(0);
      expect(restarts[0]?.target).toBe(kills[0]?.target);
      expect(restarts[0]?.evidence?.pid).not.toBe(kills[0]?.evidence?.pid);
      expect(run.check.violations).toEqual([]);
      expect(run.check.acknowledgedTasks).toBeGreaterThan(0);
    },
    300_000,
  );
});
