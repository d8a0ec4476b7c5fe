import { failover } from './failover.js';
import { killGateway } from './kill-gateway.js';
import { killRedisMaster } from './kill-redis-master.js';
import { killWorker } from './kill-worker.js';
import { partition } from './partition.js';
import { pauseWorker } from './pause-worker.js';
import type { ChaosPlan } from './plan.js';
import { rolling } from './rolling.js';
import { postgresRestart, redisRestart } from './server-restart.js';

export const CHAOS_PLANS: readonly ChaosPlan[] = [
  killGateway,
  killWorker,
  pauseWorker,
  redisRestart,
  postgresRestart,
  partition,
  rolling,
  failover,
];
/** Plans for a stack on a Redis Cluster only (`--topology cluster`). */
export const CLUSTER_CHAOS_PLANS: readonly ChaosPlan[] = [killRedisMaster];
/**
 * Plans that need the one Redis node of the default topology: a restart of it, and per-worker
 * TCP proxies to it (a cluster client learns every node's address from the cluster itself, so a
 * proxy in front of one address cannot cut a worker off).
 */
const SINGLE_REDIS_NEEDS = new Set(['redis', 'worker-links']);
const ALL_PLANS = [...CHAOS_PLANS, ...CLUSTER_CHAOS_PLANS];
export const CHAOS_PLAN_NAMES = ['none', ...ALL_PLANS.map((p) => p.name), 'all'] as const;

/** The Redis the stack runs on: one node (default) or a Redis Cluster. */
export type RedisTopology = 'single' | 'cluster';

/**
 * `kill-worker,kill-gateway` or `all` or `none` → the plans, in the order given. `all` is every
 * plan that applies to the topology: on a cluster, kill-redis-master instead of redis-restart and
 * partition.
 */
export function resolveChaosPlans(spec: string, topology: RedisTopology = 'single'): ChaosPlan[] {
  if (spec === 'none') return [];
  if (spec === 'all')
    return topology === 'single'
      ? [...CHAOS_PLANS]
      : [
          ...CHAOS_PLANS.filter((p) => !(p.needs ?? []).some((n) => SINGLE_REDIS_NEEDS.has(n))),
          ...CLUSTER_CHAOS_PLANS,
        ];
  return spec.split(',').map((name) => {
    const plan = ALL_PLANS.find((p) => p.name === name.trim());
    if (plan === undefined)
      throw new Error(
        `unknown chaos plan ${JSON.stringify(name)}; valid: ${CHAOS_PLAN_NAMES.join(', ')} (or a comma-separated list)`,
      );
    return plan;
  });
}
