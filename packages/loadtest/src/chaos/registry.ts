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
];
export const CHAOS_PLAN_NAMES = ['none', ...CHAOS_PLANS.map((p) => p.name), 'all'] as const;

/** `kill-worker,kill-gateway` or `all` or `none` → the plans, in the order given. */
export function resolveChaosPlans(spec: string): ChaosPlan[] {
  if (spec === 'none') return [];
  if (spec === 'all') return [...CHAOS_PLANS];
  return spec.split(',').map((name) => {
    const plan = CHAOS_PLANS.find((p) => p.name === name.trim());
    if (plan === undefined)
      throw new Error(
        `unknown chaos plan ${JSON.stringify(name)}; valid: ${CHAOS_PLAN_NAMES.join(', ')} (or a comma-separated list)`,
      );
    return plan;
  });
}
