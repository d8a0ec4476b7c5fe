import type { DatabaseTopology } from '../load/database-topology.js';
import { killReplica, poolerRestart } from './engine-restarts.js';
import { failover } from './failover.js';
import { killGateway } from './kill-gateway.js';
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
export const CHAOS_PLAN_NAMES = ['none', ...CHAOS_PLANS.map((p) => p.name), 'all'] as const;

const runsOn = (plan: ChaosPlan, topology: DatabaseTopology): boolean =>
  plan.topologies === undefined || plan.topologies.includes(topology);

/**
 * `kill-worker,kill-gateway` or `all` or `none` → the plans, in the order given. `all` is every
 * plan the topology supports, its own first; a plan named for a topology it does not run on is an
 * error.
 */
export function resolveChaosPlans(
  spec: string,
  topology: DatabaseTopology = 'direct',
): ChaosPlan[] {
  if (spec === 'none') return [];
  if (spec === 'all') {
    // The topology's own plans first, so that a short run still reaches them.
    const plans = CHAOS_PLANS.filter((plan) => runsOn(plan, topology));
    const own = plans.filter((plan) => plan.topologies?.length === 1);
    return [...own, ...plans.filter((plan) => !own.includes(plan))];
  }
  return spec.split(',').map((name) => {
    const plan = CHAOS_PLANS.find((p) => p.name === name.trim());
    if (plan === undefined)
      throw new Error(
        `unknown chaos plan ${JSON.stringify(name)}; valid: ${CHAOS_PLAN_NAMES.join(', ')} (or a comma-separated list)`,
      );
    if (!runsOn(plan, topology))
      throw new Error(
        `chaos plan ${plan.name} runs with --topology ${plan.topologies!.join(' or ')}, not ${topology}`,
      );
    return plan;
  });
}
