import { ledgerArguments } from './ledger.js';
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
  tool: 'slow_compute' | 'multi_input' | 'failing_job' | 'transfer_funds';
  arguments: Record<string, unknown>;
  answer: AnswerStyle;
  /** Sends tasks/cancel after this many polls (none when undefined). */
  cancelAfterPolls?: number;
  /** The other tenant reads this task's id. */
  probe: boolean;
  /** How the client waits: `tasks/get` at pollIntervalMs, or `subscriptions/listen` (the client's subscribe). */
  follow: 'poll' | 'subscribe';
  /** Seeds the lifecycle's own run-time choices (which replica to poll). */
  seed: number;
  /**
   * The client walks away at the first input request and only looks in now and then: the task
   * waits until its ttl fails it (the soak's share of work for the sweeper's expiry).
   */
  abandon?: boolean;
}

export interface MixOptions {
  /** transfer_funds in the mix (default true); slow_compute instead when false. */
  ledger?: boolean;
  /** The share of multi_input lifecycles whose client walks away (default 0). */
  abandonShare?: number;
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

function pickTool(roll: number, ledger: boolean): LifecyclePlan['tool'] {
  if (roll < 50) return 'slow_compute';
  if (roll < 78) return 'multi_input';
  if (roll < 92) return 'failing_job';
  return ledger ? 'transfer_funds' : 'slow_compute';
}

function planOne(rng: Rng, index: number, options: MixOptions): LifecyclePlan {
  const tool = pickTool(rng.int(0, 99), options.ledger ?? true);
  const args: Record<string, unknown> =
    tool === 'slow_compute'
      ? { seconds: rng.int(1, 3), label: `job-${index}` }
      : tool === 'transfer_funds'
        ? ledgerArguments(rng)
        : {};
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
    // Drawn last, and only when asked for, so the plans of a seed without it stay as they were.
    ...(options.abandonShare !== undefined &&
    tool === 'multi_input' &&
    rng.chance(options.abandonShare)
      ? { abandon: true }
      : {}),
  };
}

/**
 * The seeded mix of lifecycles: deterministic for a seed. 50 % slow_compute, 28 % multi_input,
 * 14 % failing_job, 8 % transfer_funds (examples/ledger, the exactly-once check) — slow_compute
 * instead when `ledger` is false (a `--target` deployment may not have the tool).
 */
export function generateMix(
  seed: number,
  count: number,
  options: MixOptions = {},
): LifecyclePlan[] {
  const plans = mixPlans(seed, options);
  return Array.from({ length: count }, () => plans.next().value);
}

/** The same seeded mix as generateMix, one plan at a time, for as long as it is asked. */
export function* mixPlans(seed: number, options: MixOptions = {}): Generator<LifecyclePlan, never> {
  const rng = createRng(seed);
  for (let index = 0; ; index += 1) yield planOne(rng, index, options);
}
