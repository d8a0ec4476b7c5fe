import { createRng, type Rng } from './prng.js';

/** How a lifecycle answers its task's input rounds. */
export type AnswerStyle =
  | 'full' // every key at once
  | 'partial' // one key per update
  | 'twice' // every key, then the same update again
  | 'unknown-key' // an extra key nobody asked for, then the real ones
  | 'decline'; // every key declined

/**
 * The two-tenant mix: most lifecycles belong to a heavy tenant, the rest to a light one, and each
 * tenant probes the other's ids. With the workers busy, the heavy tenant keeps a queue of its own
 * waiting, which is where fair scheduling shows: the light tenant's tasks still start soon.
 */
export type TenantRole = 'heavy' | 'light';

/** The light tenant's share of lifecycles. */
const LIGHT_SHARE = 0.2;

export interface LifecyclePlan {
  index: number;
  /** Whose task it is; the other tenant probes it. */
  tenant: TenantRole;
  tool: 'slow_compute' | 'multi_input' | 'failing_job';
  arguments: Record<string, string | number>;
  answer: AnswerStyle;
  /** Sends tasks/cancel after this many polls (none when undefined). */
  cancelAfterPolls?: number;
  /** The other tenant reads this task's id. */
  probe: boolean;
  /** How the client waits: `tasks/get` at pollIntervalMs, or `subscriptions/listen` (the client's subscribe). */
  follow: 'poll' | 'subscribe';
  /** Seeds the lifecycle's own run-time choices (which replica to poll). */
  seed: number;
}

const ANSWER_STYLES: readonly AnswerStyle[] = [
  'full',
  'partial',
  'twice',
  'unknown-key',
  'decline',
];

/** The share of clients that wait on a subscription instead of polling. */
const SUBSCRIBER_SHARE = 0.3;

function planOne(rng: Rng, index: number): LifecyclePlan {
  const roll = rng.int(0, 99);
  const tool = roll < 55 ? 'slow_compute' : roll < 85 ? 'multi_input' : 'failing_job';
  const args: Record<string, string | number> =
    tool === 'slow_compute' ? { seconds: rng.int(1, 3), label: `job-${index}` } : {};
  return {
    index,
    tool,
    arguments: args,
    answer: rng.pick(ANSWER_STYLES),
    ...(rng.chance(0.1) ? { cancelAfterPolls: rng.int(0, 2) } : {}),
    probe: rng.chance(0.2),
    seed: rng.int(0, 0x7fffffff),
    follow: rng.chance(SUBSCRIBER_SHARE) ? 'subscribe' : 'poll',
    tenant: rng.chance(LIGHT_SHARE) ? 'light' : 'heavy',
  };
}

/** The seeded mix of lifecycles: deterministic for a seed. */
export function generateMix(seed: number, count: number): LifecyclePlan[] {
  const rng = createRng(seed);
  return Array.from({ length: count }, (_, index) => planOne(rng, index));
}
