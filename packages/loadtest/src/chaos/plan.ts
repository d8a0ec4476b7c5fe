import { setTimeout as sleep } from 'node:timers/promises';
import type { HistoryRecorder } from '../history/recorder.js';
import type { Rng } from '../load/prng.js';

/** What a chaos plan can act on: a small interface over `@mcp-tasks/stack`'s processes. */
export interface ControlledProcess {
  name: string;
  role: 'gateway' | 'worker' | 'proxy';
  workerId?: string;
  running: boolean;
  kill(signal: NodeJS.Signals): void;
  exited(): Promise<unknown>;
  start(): Promise<void>;
  restart(graceMs?: number): Promise<void>;
}

/** A server the harness owns (never the shared one): it can be restarted in place. */
export interface RestartableServer {
  name: 'redis' | 'postgres';
  restart(): Promise<void>;
}

export interface ChaosContext {
  gateways: ControlledProcess[];
  workers: ControlledProcess[];
  servers: Partial<Record<RestartableServer['name'], RestartableServer>>;
  recorder: HistoryRecorder;
  rng: Rng;
  leaseMs: number;
  /** Worker ids with a step running now (from the step log). */
  busyWorkers(): string[];
  /** Aborted when the load ends: a plan finishes its current round (restoring what it broke) and returns. */
  signal: AbortSignal;
  /** Counts one event (for the progress bar). */
  onEvent(): void;
}

export interface ChaosPlan {
  name: string;
  /** What the plan needs besides the stack's processes. */
  needs?: readonly RestartableServer['name'][];
  /** One round: break something, restore it. Called again until the signal aborts. */
  round(ctx: ChaosContext, record: (action: string, target: string) => void): Promise<void>;
  /** Pause between rounds. */
  everyMs: number;
}

/** The target a history names: a worker's WORKER_ID (steps are cut at its kill), else the name. */
export const targetOf = (process: ControlledProcess) => process.workerId ?? process.name;

/** Sleeps unless the signal, if any, aborts first (never throws). */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch(() => undefined);
}

/** A worker running a step when there is one (that is where chaos hurts), else any worker. */
export function pickBusyWorker(ctx: ChaosContext): ControlledProcess {
  const busy = new Set(ctx.busyWorkers());
  const candidates = ctx.workers.filter((w) => busy.has(targetOf(w)));
  return ctx.rng.pick(candidates.length > 0 ? candidates : ctx.workers);
}

/** Runs plans one after the other, `phaseMs` each, round after round, until the signal aborts. */
export async function runChaos(
  plans: readonly ChaosPlan[],
  ctx: ChaosContext,
  phaseMs: number,
): Promise<void> {
  let count = 0;
  for (let phase = 0; !ctx.signal.aborted; phase += 1) {
    const plan = plans[phase % plans.length]!;
    const phaseEnd = Date.now() + phaseMs;
    while (!ctx.signal.aborted && (plans.length === 1 || Date.now() < phaseEnd)) {
      await pause(plan.everyMs, ctx.signal);
      if (ctx.signal.aborted) break;
      await plan.round(ctx, (action, target) => {
        count += 1;
        ctx.recorder.chaos({ id: `${plan.name}-${count}`, plan: plan.name, action, target });
        ctx.onEvent();
      });
    }
  }
}
