import type { DatabaseTopology } from '../load/database-topology.js';
import { killReplica, poolerRestart } from './engine-restarts.js';
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
  poolerRestart,
  killReplica,
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
 * Whether a plan runs on a stack: its database topology (a plan may name the ones it runs on),
 * and on a Redis Cluster not the plans that need the one Redis node (a restart of it, per-worker
 * proxies to it).
 */
function runsOn(plan: ChaosPlan, topology: DatabaseTopology, redis: RedisTopology): boolean {
  const database = plan.topologies === undefined || plan.topologies.includes(topology);
  const needsSingleRedis = (plan.needs ?? []).some((need) => SINGLE_REDIS_NEEDS.has(need));
  return database && !(redis === 'cluster' && needsSingleRedis);
}

/**
 * `kill-worker,kill-gateway` or `all` or `none` → the plans, in the order given. `all` is every
 * plan the topology supports, its own first (on a Redis Cluster: kill-redis-master instead of
 * redis-restart and partition); a plan named for a topology it does not run on is an error.
 */
export function resolveChaosPlans(
  spec: string,
  topology: DatabaseTopology = 'direct',
  redis: RedisTopology = 'single',
): ChaosPlan[] {
  if (spec === 'none') return [];
  if (spec === 'all') {
    const candidates = redis === 'cluster' ? ALL_PLANS : CHAOS_PLANS;
    const plans = candidates.filter((plan) => runsOn(plan, topology, redis));
    // The topology's own plans first, so that a short run still reaches them.
    const own = plans.filter(
      (plan) => plan.topologies?.length === 1 || CLUSTER_CHAOS_PLANS.includes(plan),
    );
    return [...own, ...plans.filter((plan) => !own.includes(plan))];
  }
  return spec.split(',').map((name) => {
    const plan = ALL_PLANS.find((p) => p.name === name.trim());
    if (plan === undefined)
      throw new Error(
        `unknown chaos plan ${JSON.stringify(name)}; valid: ${CHAOS_PLAN_NAMES.join(', ')} (or a comma-separated list)`,
      );
    if (plan.topologies !== undefined && !plan.topologies.includes(topology))
      throw new Error(
        `chaos plan ${plan.name} runs with --topology ${plan.topologies.join(' or ')}, not ${topology}`,
      );
    return plan;
  });
}
