import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  FailoverCluster,
  PgBouncer,
  PostgresServer,
  RedisCluster,
  TcpProxy,
} from '@mcp-tasks/testing';
import type { DatabaseTopology } from '../load/database-topology.js';
import type { HistoryRecorder } from '../history/recorder.js';
import type { ChaosRecord } from '../history/records.js';
import type { Rng } from '../load/prng.js';

/** What a chaos plan can act on: a small interface over `@mcp-tasks/stack`'s processes. */
export interface ControlledProcess {
  name: string;
  role: 'gateway' | 'worker' | 'proxy';
  workerId?: string;
  /** The current child's pid (a new one after each start). */
  readonly pid: number | undefined;
  running: boolean;
  kill(signal: NodeJS.Signals): void;
  /** The exit code or signal of the current child, once it exited. */
  exited(): Promise<number | string | null>;
  start(): Promise<void>;
  /** Graceful stop (bounded); resolves with the exit code or signal. */
  stop(graceMs?: number): Promise<number | string | null>;
}

/** A server the harness owns (never the shared one): it can be restarted in place. */
export interface RestartableServer {
  name: 'redis' | 'postgres';
  /** The server process's pid now (the postmaster's for Postgres). */
  pid(): Promise<number | undefined>;
  restart(): Promise<void>;
}

/** One worker's own connections to Postgres and Redis, through proxies the harness controls. */
export interface WorkerLinks {
  postgres: TcpProxy;
  redis: TcpProxy;
}

/**
 * What a plan needs besides the stack's processes. `failover-cluster`: the harness's own primary
 * and streaming standby behind endpoints it moves (packages/testing failover-cluster.ts); the
 * stack writes through one and its gateways read from the other.
 */
export type ChaosNeed =
  | RestartableServer['name']
  | 'worker-links'
  | 'failover-cluster'
  | 'pooler'
  | 'replicas'
  | 'redis-cluster';

export type Evidence = NonNullable<ChaosRecord['evidence']>;

export interface ChaosContext {
  gateways: ControlledProcess[];
  workers: ControlledProcess[];
  servers: Partial<Record<RestartableServer['name'], RestartableServer>>;
  /** When a plan needs `failover-cluster`. */
  cluster?: FailoverCluster;
  /** With `--topology pooler`: the PgBouncer in front of Postgres. */
  pooler?: Pick<PgBouncer, 'pid' | 'restart'>;
  /** With `--topology replicas`: the replicas behind the reader endpoint. */
  replicas?: readonly PostgresServer[];
  /**
   * When the stack runs on a Redis Cluster (`--topology cluster`, or a plan needs
   * `redis-cluster`): the cluster, and a key in the slot the stack's queue lives in.
   */
  redisCluster?: { cluster: RedisCluster; queueKey: string };
  /** By WORKER_ID, when a plan needs `worker-links`. */
  links: ReadonlyMap<string, WorkerLinks>;
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
  needs?: readonly ChaosNeed[];
  /** The --topology values it runs on (default: every one); `all` leaves it out elsewhere. */
  topologies?: readonly DatabaseTopology[];
  /** One round: break something, restore it. Called again until the signal aborts. */
  round(
    ctx: ChaosContext,
    record: (action: string, target: string, evidence?: Evidence) => void,
  ): Promise<void>;
  /** Pause between rounds. */
  everyMs: number;
}

/** The target a history names: a worker's WORKER_ID (steps are cut at its kill), else the name. */
export const targetOf = (process: ControlledProcess) => process.workerId ?? process.name;

/**
 * The kernel's run state of a process (`T` stopped, `S` sleeping, `R` running, …), from
 * /proc/PID/stat; undefined when it is gone or /proc is missing.
 */
export async function processState(pid: number | undefined): Promise<string | undefined> {
  if (pid === undefined) return undefined;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  // "PID (comm) STATE ...": comm may hold spaces and parentheses, so split at the last ')'.
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
}

/** Polls the process state until `accept` holds (a signal takes effect asynchronously), for at most 1 s. */
export async function settledState(
  pid: number | undefined,
  accept: (state: string | undefined) => boolean,
): Promise<string | null> {
  let state = await processState(pid);
  for (let i = 0; i < 50 && !accept(state); i += 1) {
    await sleep(20);
    state = await processState(pid);
  }
  return state ?? null;
}

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

/** How many rounds each plan of a run began, in the run's order; 0 for a plan whose phase never came. */
export type ChaosRounds = { plan: string; rounds: number }[];

/** A chaos round threw: the run stops, and says which plan's round it was and why. */
export class ChaosRoundError extends Error {
  constructor(
    readonly plan: string,
    readonly round: number,
    cause: unknown,
    /** The rounds begun up to and including the one that threw. */
    readonly rounds: ChaosRounds,
  ) {
    super(
      `chaos plan ${plan} failed in round ${round}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = 'ChaosRoundError';
  }
}

/**
 * Runs plans one after the other, `phaseMs` each, round after round, until the signal aborts or,
 * with `passes`, until every plan had that many phases; resolves with the rounds each plan began.
 * A round that throws ends the chaos at once with a ChaosRoundError (what it broke stays broken,
 * so the load must stop too).
 */
export async function runChaos(
  plans: readonly ChaosPlan[],
  ctx: ChaosContext,
  phaseMs: number,
  passes?: number,
): Promise<ChaosRounds> {
  const rounds: ChaosRounds = plans.map((plan) => ({ plan: plan.name, rounds: 0 }));
  const lastPhase = passes === undefined ? Infinity : plans.length * passes;
  // A lone plan without passes has one endless phase: the load's end is its end.
  const endless = plans.length === 1 && passes === undefined;
  let count = 0;
  for (let phase = 0; !ctx.signal.aborted && phase < lastPhase; phase += 1) {
    const plan = plans[phase % plans.length]!;
    const tally = rounds[phase % plans.length]!;
    const phaseEnd = Date.now() + phaseMs;
    // A phase begins at least one round, however short it is.
    let began = false;
    while (!ctx.signal.aborted && (endless || !began || Date.now() < phaseEnd)) {
      began = true;
      await pause(plan.everyMs, ctx.signal);
      if (ctx.signal.aborted) break;
      tally.rounds += 1;
      try {
        await plan.round(ctx, (action, target, evidence) => {
          count += 1;
          ctx.recorder.chaos({
            id: `${plan.name}-${count}`,
            plan: plan.name,
            action,
            target,
            ...(evidence === undefined ? {} : { evidence }),
          });
          ctx.onEvent();
        });
      } catch (error) {
        throw new ChaosRoundError(plan.name, tally.rounds, error, rounds);
      }
    }
  }
  return rounds;
}
