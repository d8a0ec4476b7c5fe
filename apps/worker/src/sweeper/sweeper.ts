import {
  DEFAULT_SWEEP_BATCH,
  createLeadershipSession,
  databaseNow,
  deleteExpiredTaskBatch,
  expireTaskBatch,
  isTransientInfrastructureError,
  recordSweep,
  type Db,
  type LeadershipSession,
  type OrphanWaker,
} from '@mcp-tasks/store';
import { performance } from 'node:perf_hooks';
import { runInBatches } from './batch-loop.js';
import type { Logger } from '../logger.js';
import type { WorkerMetrics } from '../metrics.js';

export const SWEEPER_LOCK_NAME = 'mcp-tasks-sweeper';
/** Default time one sweep step may keep taking batches before it leaves the rest to the next sweep. */
export const DEFAULT_SWEEP_STEP_BUDGET_MS = 2_000;
/** A batch never shrinks below this after statement timeouts. */
const MIN_BATCH = 10;
/**
 * While expiries are left over, the orphans' wake-up waits, but never for more than this many sweep
 * intervals: an expiry backlog that never clears must not keep lost wake-ups lost.
 */
export const MAX_ORPHAN_WAKE_DEFERRAL_INTERVALS = 10;

export type SweepStepName = 'expire' | 'redispatch' | 'delete';

export interface Sweeper {
  start(): void;
  /** Stops scheduling and waits for a sweep in progress. */
  stop(): Promise<void>;
}

const isStatementTimeout = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '57014';

interface SweeperOptions {
  connectionString: string;
  db: Db;
  /** Finds and wakes orphans: the store's door for the sweeper. */
  orphans: OrphanWaker;
  intervalMs: number;
  retentionMs: number;
  /** Named in the last-sweep row the console's health page reads (sweeper_state). */
  workerId?: string;
  /** Rows per statement; halved (down to 10) for a step whose statement timed out. */
  batchSize?: number;
  /** How long one step may keep taking batches within one sweep (monotonic clock). */
  stepBudgetMs?: number;
  /**
   * After this sweeper lost Postgres, how long expired leases are left alone once it is back
   * (default 0): their holders most likely lost it too and are about to give them back, and a
   * a wake-up now would make the next claim a takeover, charged to the task as a failure.
   */
  holderGraceMs?: number;
  /** Postgres ends a silent leader's lock session after this long (see createLeadershipSession). */
  leaderTimeoutMs?: number;
  logger: Logger;
  metrics: WorkerMetrics;
}

/** What a sweeper keeps from one sweep to the next; its steps and its schedule read and write it. */
interface SweeperState {
  /** Rows per statement for each step; halved (down to 10) for a step whose statement timed out. */
  batchSizes: Record<SweepStepName, number>;
  /** A step of the last sweep ran out of time with work left: the next one starts at once. */
  backlogLeft: boolean;
  lastOrphanWakeAt: number;
  /** Set while Postgres is unreachable; replaced by when expired leases may be swept again. */
  outage: boolean;
  takeoversFrom: number;
}

/** What one sweep works with: the sweeper's options, state, lock session and step runner. */
interface SweepContext {
  options: SweeperOptions;
  state: SweeperState;
  leadership: LeadershipSession;
  runStep: StepRunner;
  /** Not stopped, and still the leader. */
  mayGoOn: () => boolean;
  /** Notes an outage (a transient infrastructure error) for the next sweep's holder grace. */
  noteFailure: (error: unknown) => void;
}

/**
 * One sweep at a time across all workers, elected per tick with a Postgres advisory lock (on one
 * leadership connection per process, kept across ticks) that is held only while sweeping: a
 * frozen leader (SIGSTOP, a long GC pause) can then block sweeping for at most one sweep, not
 * until it dies. Each sweep fails expired tasks, wakes orphans again
 * (never enqueued, lease expired, wake-up lost with Redis), and deletes those past retention.
 * Each step works in bounded batches for at most its time budget, and runs even if the one before
 * failed: a backlog is worked off over several sweeps, back to back while it lasts, instead of
 * timing out as one statement.
 * Losing the leadership connection mid-sweep (the lock dies with it, and another worker may take
 * over) stops the sweep after the batch in flight.
 */
export function createSweeper(options: SweeperOptions): Sweeper {
  const { logger, metrics } = options;
  const configuredBatch = options.batchSize ?? DEFAULT_SWEEP_BATCH;
  const state: SweeperState = {
    batchSizes: {
      expire: configuredBatch,
      redispatch: configuredBatch,
      delete: configuredBatch,
    },
    backlogLeft: false,
    lastOrphanWakeAt: performance.now(),
    outage: false,
    takeoversFrom: 0,
  };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const noteFailure = (error: unknown): void => {
    if (isTransientInfrastructureError(error)) state.outage = true;
  };
  const leadership = createLeadershipSession({
    connectionString: options.connectionString,
    lockName: SWEEPER_LOCK_NAME,
    idleSessionTimeoutMs: options.leaderTimeoutMs,
    onLost: (error) => {
      state.outage = true;
      logger.warn({ err: error }, 'lost the sweeper lock mid-sweep; stopping this sweep');
    },
  });
  const mayGoOn = (): boolean => !stopped && leadership.isLeader();
  const runStep = createStepRunner(options, state, mayGoOn, noteFailure);
  const sweep: SweepContext = { options, state, leadership, runStep, mayGoOn, noteFailure };

  // While a backlog is left the sweeps follow each other without the interval's pause: a backlog
  // drains at the statements' pace, not at budget/interval of it. Each sweep still ends, so the
  // lock is released (and the leader re-elected) between them.
  const schedule = (): void => {
    if (stopped) return;
    const delayMs = state.backlogLeft ? 0 : options.intervalMs;
    state.backlogLeft = false;
    timer = setTimeout(() => {
      running = sweepOnce(sweep)
        .catch((error: unknown) => {
          noteFailure(error);
          metrics.sweeps.inc({ role: 'error' });
          logger.warn({ err: error }, 'sweep failed');
        })
        .finally(() => {
          running = undefined;
          schedule();
        });
    }, delayMs);
  };

  return {
    start: schedule,
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
      await leadership.close();
    },
  };
}

/** One step, isolated: its failure is logged and counted, and the sweep goes on. */
function createStepRunner(
  options: SweeperOptions,
  state: SweeperState,
  mayGoOn: () => boolean,
  noteFailure: (error: unknown) => void,
): StepRunner {
  const { logger, metrics } = options;
  const budgetMs = options.stepBudgetMs ?? DEFAULT_SWEEP_STEP_BUDGET_MS;
  const { batchSizes } = state;
  return async (step, runBatch) => {
    const result = await runInBatches({
      batchSize: batchSizes[step],
      budgetMs,
      runBatch,
      shouldStop: () => !mayGoOn(),
    });
    if (result.failure !== undefined) {
      const { error } = result.failure;
      noteFailure(error);
      metrics.sweepStepErrors.inc({ step });
      if (isStatementTimeout(error) && batchSizes[step] > MIN_BATCH) {
        batchSizes[step] = Math.max(MIN_BATCH, Math.floor(batchSizes[step] / 2));
      }
      logger.warn(
        { err: error, step, batchSize: batchSizes[step], handled: result.total },
        'sweep step failed',
      );
    } else if (result.outOfTime) {
      state.backlogLeft = true;
      logger.info(
        { step, handled: result.total },
        'sweep step out of time; the next sweep goes on',
      );
    }
    // The batches before a failed one committed: their rows count (metrics, the console's record).
    return result.total;
  };
}

/** One tick: sweeps if this process takes the lock, then lets it go. */
async function sweepOnce(sweep: SweepContext): Promise<void> {
  const { options, state, leadership, runStep, mayGoOn, noteFailure } = sweep;
  const { db, logger, metrics } = options;
  if (!(await leadership.acquire())) {
    metrics.sweeps.inc({ role: 'follower' });
    return;
  }
  if (state.outage) {
    state.outage = false;
    state.takeoversFrom = performance.now() + (options.holderGraceMs ?? 0);
  }
  const expiredLeases = performance.now() >= state.takeoversFrom;
  const sweepStartedAt = performance.now();
  try {
    // The database clock: leases and expiry are written with Postgres now(), not this host's.
    const now = await databaseNow(db);
    // Expire first: a task past its ttl needs no wake-up.
    const expired = await expireAll(db, now, runStep);
    // Keeps going while whole batches come back (a Redis that lost its data leaves every
    // queued task orphaned), so recovery scales with the backlog instead of one batch a sweep.
    // While expiries are left over, the next sweep follows at once and comes here again: waking
    // tasks now would wake the expired backlog itself (its rows are the oldest orphans), each
    // a claim and a tool run for a task about to fail. Bounded, in case the backlog never clears.
    const orphanWakeDue =
      !state.backlogLeft ||
      performance.now() - state.lastOrphanWakeAt >=
        MAX_ORPHAN_WAKE_DEFERRAL_INTERVALS * options.intervalMs;
    let redispatched = 0;
    if (mayGoOn() && orphanWakeDue) {
      state.lastOrphanWakeAt = performance.now();
      redispatched = await wakeAllOrphans(options.orphans, now, expiredLeases, runStep);
    }
    const deleted = mayGoOn() ? await deleteAll(db, now, options.retentionMs, runStep) : 0;
    metrics.sweeps.inc({ role: 'leader' });
    metrics.redispatched.inc(redispatched);
    metrics.sweptTasks.inc({ step: 'expire' }, expired);
    metrics.sweptTasks.inc({ step: 'delete' }, deleted);
    // Still under the lock: the row names the leader of this sweep. Its failure is only logged.
    if (options.workerId !== undefined && mayGoOn()) {
      await recordSweep(db, {
        workerId: options.workerId,
        durationMs: performance.now() - sweepStartedAt,
        expired,
        redispatched,
        deleted,
        retentionMs: options.retentionMs,
        intervalMs: options.intervalMs,
      }).catch((error: unknown) => {
        noteFailure(error);
        logger.warn({ err: error }, 'could not record the sweep for the console');
      });
    }
    if (redispatched + expired + deleted > 0) {
      logger.info({ redispatched, expired, deleted }, 'sweep');
    }
  } finally {
    await leadership.release();
  }
}

/** Runs one sweep step in bounded batches; what it handled (0 when it failed). */
type StepRunner = (
  step: SweepStepName,
  runBatch: (limit: number) => Promise<number>,
) => Promise<number>;

/**
 * Fails expired tasks. Each batch goes on from where the last one ended (expireTaskBatch's
 * `from`), so a drain does not re-read its own wake.
 */
async function expireAll(db: Db, now: Date, runStep: StepRunner): Promise<number> {
  let expireFrom: Date | undefined;
  return runStep('expire', async (limit) => {
    const batch = await expireTaskBatch(db, now, { limit, from: expireFrom });
    expireFrom = batch.reached ?? expireFrom;
    return batch.count;
  });
}

/** Wakes orphans batch after batch; how many got a new wake-up. */
async function wakeAllOrphans(
  orphans: OrphanWaker,
  now: Date,
  expiredLeases: boolean,
  runStep: StepRunner,
): Promise<number> {
  let woken = 0;
  await runStep('redispatch', async (limit) => {
    const batch = await orphans.wakeOrphans(now, { limit, expiredLeases });
    woken += batch.woken;
    // Orphans that failed stay orphans: the next batch would find them again, so stop here.
    return batch.failed > 0 ? 0 : batch.found;
  });
  return woken;
}

/** Deletes terminal tasks past retention, each batch going on `from` the last one's end. */
async function deleteAll(
  db: Db,
  now: Date,
  retentionMs: number,
  runStep: StepRunner,
): Promise<number> {
  let deleteFrom: Date | undefined;
  return runStep('delete', async (limit) => {
    const batch = await deleteExpiredTaskBatch(db, now, retentionMs, {
      limit,
      from: deleteFrom,
    });
    deleteFrom = batch.reached ?? deleteFrom;
    return batch.count;
  });
}
